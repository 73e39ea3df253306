package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Error is a mistake in .strata.yaml found after it decoded, positioned at
// the key at fault. It is a usage error: the configuration must be fixed.
type Error struct{ state.Problem }

func (e *Error) Error() string { return e.Problem.Error() }

// checkFileKey checks the path named by `memory:` or `graph:`. A committed
// configuration travels with every clone, so it may only name a file of the
// work tree, checked as a glob is: repository-relative, no "..", nothing
// inside .git. The one file outside the work tree it may name is Claude
// Code's auto-memory file of this repository, which strata finds by itself
// anyway; $MEMORY_FILE_PATH, set by the user, is read from the environment.
func (c *Config) checkFileKey(p string) error {
	if p == "" || p == c.AutoMemory() {
		return nil
	}
	if p == "~" || len(p) > 1 && p[0] == '~' {
		return errors.New("outside the work tree: name a repository-relative path (only Claude Code's auto-memory file is kept outside it, found without configuration)")
	}
	return checkRel(p)
}

// checkFormat checks a rule's format: key.
func checkFormat(f string) error {
	if f == "" || slices.Contains(validate.Formats, f) {
		return nil
	}
	return fmt.Errorf("unknown format %q, want one of %s", f, strings.Join(validate.Formats, ", "))
}

// maxConfigSize bounds .strata.yaml, as the YAML decoder does.
const maxConfigSize = validate.DefaultMaxSize

// errText drops the file name an *fs.PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
