package config

import (
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
// is what AddRule writes and what init suggests to paste. Go's quoting
// (strconv.Quote, as state.TermSafe quotes) uses only escapes YAML's
// double-quoted style reads the same way.
func RuleLine(glob, schema string) string {
	return fmt.Sprintf("{glob: %s, schema: %s}", strconv.Quote(glob), strconv.Quote(schema))
}

// AddRule makes {glob, schema} the first rule of root/.strata.yaml, so it
// wins over every other rule, by inserting one line: the file's comments,
// order and spacing stay as they were. A missing file is created. It
// returns false when a rule for exactly this glob already names this
// schema (nothing to do), and an error when a rule for the glob names
// another (the user decides). The result must load; if it does not, the
// file is put back as it was and the error returned.
func AddRule(root, glob, schema string) (bool, error) {
	c, err := Load(root)
	if err != nil {
		return false, err
	}
	for _, r := range c.UserRules() {
		if r.Glob != glob {
			continue
		}
		if r.Schema == schema && !r.Ignore && r.Class == "" && r.Format == "" {
			return false, nil
		}
		return false, fmt.Errorf("%s already has a rule for %s; point its schema: at %s by hand", FileName, glob, schema)
	}
	name := filepath.Join(root, FileName)
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file (a symbolic link is never written through); add the rule by hand", FileName)
	}
	old, err := state.ReadRegular(name, maxConfigSize, true)
	mode := fs.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return false, fmt.Errorf("read %s: %s", FileName, errText(err))
	default:
		if st, err := os.Stat(name); err == nil {
			mode = st.Mode().Perm()
		}
	}
	data, err := validate.PrependListItem(old, "files", RuleLine(glob, schema))
	if err != nil {
		return false, fmt.Errorf("%s: %w; add the rule by hand", FileName, err)
	}
	if old == nil {
		data = append([]byte("version: 1\n"), data...)
	}
	if err := atomicfile.Write(name, data, mode); err != nil {
		return false, fmt.Errorf("write %s: %w", FileName, err)
	}
	if _, err := Load(root); err != nil {
		if old == nil {
			os.Remove(name)
		} else if werr := atomicfile.Write(name, old, mode); werr != nil {
			return false, fmt.Errorf("write %s: %w (after %v)", FileName, werr, err)
		}
		return false, err
	}
	return true, nil
}
