package engine

import (
	"fmt"
	"strings"

	"github.com/strata-dev/strata/infer"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Inferred is a draft JSON Schema inferred from versions of a user's files.
type Inferred struct {
	Schema   []byte
	Files    int      // distinct paths read
	Versions int      // versions the schema was inferred from
	Skipped  []string // "PATH (version X): why" for versions that do not parse
	Paths    []string // every path matched, also one whose versions were all skipped
}

// InferSchema drafts a 2020-12 JSON Schema accepting every readable version
// of the files matching globs (see Examples), and checks it against each of
// them before returning it: the schema accepts every input, or this is an
// error.
func (e *Engine) InferSchema(globs []string) (*Inferred, error) {
	exs, err := e.Examples(globs)
	if err != nil {
		return nil, err
	}
	var in infer.Inferrer
	var used []Example
	out := &Inferred{}
	files := map[string]bool{}
	for _, x := range exs {
		if len(out.Paths) == 0 || out.Paths[len(out.Paths)-1] != x.Path { // exs are by path
			out.Paths = append(out.Paths, x.Path)
		}
		docs, ps := validate.DecodeDocs(x.Path, x.Content, x.Format)
		if ps.Invalid() {
			out.Skipped = append(out.Skipped, versionName(x)+": "+strings.TrimPrefix(ps[0].Error(), x.Path+":"))
			continue
		}
		for _, d := range docs {
			in.Add(d)
		}
		used = append(used, x)
		files[x.Path] = true
	}
	out.Files, out.Versions = len(files), len(used)
	if len(used) == 0 {
		return out, nil
	}
	comment := fmt.Sprintf("inferred by strata schema infer %s from %d %s, %d %s; a draft to review",
		strings.Join(globs, " "), out.Files, Plural(out.Files, "file", "files"), out.Versions, Plural(out.Versions, "version", "versions"))
	// escaped as every JSON strata prints: an enum value or a name comes from a file
	out.Schema = state.JSONSafe(infer.Marshal(in.Schema(comment)))
	for _, x := range used { // the contract: the schema accepts every input
		ps, err := validate.CheckAgainst(out.Schema, x.Path, x.Content, x.Format)
		if err != nil { // past the validator's budget: not checked, not a bug
			return nil, &TooCostlyError{Version: versionName(x), Err: err}
		}
		if ps.Invalid() {
			return nil, fmt.Errorf("inferred schema rejects %s (a bug in strata): %s", versionName(x), ps[0].Error())
		}
	}
	return out, nil
}

// TooCostlyError is a draft that could not be checked against a version
// it was inferred from within the validator's evaluation budget: nothing
// is written, as a draft strata cannot check is one it could not load.
type TooCostlyError struct {
	Version string
	Err     error
}

func (e *TooCostlyError) Error() string {
	return fmt.Sprintf("the inferred schema is too large to check against %s within the validator's evaluation budget, so strata could not use it either; nothing written: infer it from fewer or smaller files", e.Version)
}

func (e *TooCostlyError) Unwrap() error { return e.Err }

func versionName(x Example) string {
	switch {
	case x.Commit == "":
		return x.Path
	case x.Rejected:
		return fmt.Sprintf("%s (rejected version %.10s)", x.Path, x.Commit)
	}
	return fmt.Sprintf("%s (version %.10s)", x.Path, x.Commit)
}

// Plural picks the word for n things.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
