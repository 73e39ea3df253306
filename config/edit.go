package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// UserRules are the rules of .strata.yaml, before the built-in ones.
func (c *Config) UserRules() []Rule { return c.Rules[:c.user] }

// RuleLine is the rule {glob, schema} as one line of .strata.yaml's files:
// list, each value a YAML double-quoted string, so any name reads back as
// itself (": ", " #", "{a,b}" and a leading "*" or "&" included), and with
// a control or format character escaped, so the line is printable text. It
// is what PlanRules adds and what init suggests to paste. Go's quoting
// (strconv.Quote, as state.TermSafe quotes) uses only escapes YAML's
// double-quoted style reads the same way.
func RuleLine(glob, schema string) string {
	return fmt.Sprintf("{glob: %s, schema: %s}", strconv.Quote(glob), strconv.Quote(schema))
}

// RuleEdit is .strata.yaml with rules added first, checked (it loads) but
// not written yet: a caller that writes other files with it (schema infer
// --apply writes the schema the rules name) plans the edit first, so a
// refusal writes nothing at all.
type RuleEdit struct {
	name      string
	old, data []byte // old is nil when there is no .strata.yaml
	mode      fs.FileMode
	// Added says, for each glob planned, whether its rule is added: false
	// when a rule for exactly that glob already names that schema.
	Added []bool
}

// PlanRules plans making {glob, schema} the first rule of root/.strata.yaml
// for each glob (the last one first), so it wins over every other rule, by
// inserting one line each: the file's comments, order, spacing, anchors and
// tags stay as they were; a missing file is created. A rule for a glob that
// names another schema is an *Error at that rule (the user decides), as is
// a files: the edit cannot add to (a flow list, an alias), with the rule to
// add by hand. Nothing is written.
func PlanRules(root string, globs []string, schema string) (*RuleEdit, error) {
	e := &RuleEdit{name: filepath.Join(root, FileName), mode: 0o644}
	c, err := Load(root)
	if err != nil {
		return nil, err
	}
	if st, err := os.Lstat(e.name); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (a symbolic link is never written through); add the rule by hand", FileName)
	}
	old, err := state.ReadRegular(e.name, maxConfigSize, true)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %s", FileName, errText(err))
	default:
		if st, err := os.Stat(e.name); err == nil {
			e.mode = st.Mode().Perm()
		}
	}
	e.old, e.data = old, old
	for _, glob := range globs {
		added, err := e.plan(c, glob, schema)
		if err != nil {
			return nil, err
		}
		e.Added = append(e.Added, added)
		if added {
			if c, err = Parse(root, e.data); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// plan adds the rule for one glob to e.data; c is e.data loaded.
func (e *RuleEdit) plan(c *Config, glob, schema string) (bool, error) {
	item := RuleLine(glob, schema)
	for i, r := range c.UserRules() {
		if r.Glob != glob {
			continue
		}
		if r.Schema == schema && !r.Ignore && r.Class == "" && r.Format == "" {
			return false, nil
		}
		return false, &Error{validate.ProblemAt(FileName, e.data, true, fmt.Sprintf("/files/%d", i),
			fmt.Sprintf("a rule for %s is already here; point its schema: at %s by hand", glob, schema))}
	}
	data, err := validate.PrependListItem(e.data, "files", item)
	var p state.Problem
	switch {
	case errors.As(err, &p):
		p.Path = FileName
		p.Message += "; add the rule by hand: - " + item
		return false, &Error{p}
	case err != nil:
		return false, fmt.Errorf("%s: %w; add the rule by hand: - %s", FileName, err, item)
	}
	if e.old == nil && e.data == nil {
		data = append([]byte("version: 1\n"), data...)
	}
	e.data = data
	return true, nil
}

// Write writes the planned .strata.yaml, when a rule was added. A file
// changed on disk since PlanRules read it is left alone (an error: run it
// again).
func (e *RuleEdit) Write() error {
	if bytes.Equal(e.data, e.old) {
		return nil
	}
	now, err := state.ReadRegular(e.name, maxConfigSize, true)
	if errors.Is(err, fs.ErrNotExist) {
		now, err = nil, nil
	}
	if err != nil || !bytes.Equal(now, e.old) || (now == nil) != (e.old == nil) {
		return fmt.Errorf("%s changed on disk while the rule was added; nothing written, run it again", FileName)
	}
	if err := atomicfile.Write(e.name, e.data, e.mode); err != nil {
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	return nil
}
