package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// UserRules are the rules of .strata.yaml, before the built-in ones.
func (c *Config) UserRules() []Rule { return c.Rules[:c.user] }

// RuleLine is the rule {glob, schema} as one line of .strata.yaml's files:
// list, each value a YAML double-quoted string (QuoteYAML), so any name
// reads back as itself (": ", " #", "{a,b}" and a leading "*" or "&"
// included), and with a control or format character escaped, so the line
// is printable text. It is what PlanRules adds and what init suggests to
// paste. A value that is not UTF-8 is an error: YAML holds only Unicode
// text, so no rule can name such a file (Go's quoting wrote its byte 0xff
// as "\xff", which YAML reads as the character U+00FF: a rule for another
// name, added again on every run; attack34 L3).
func RuleLine(glob, schema string) (string, error) {
	g, ok := QuoteYAML(glob)
	if !ok {
		return "", notUTF8(glob)
	}
	s, ok := QuoteYAML(schema)
	if !ok {
		return "", notUTF8(schema)
	}
	return fmt.Sprintf("{glob: %s, schema: %s}", g, s), nil
}

func notUTF8(name string) error {
	return fmt.Errorf("%s is not UTF-8 text, and %s (YAML) holds only UTF-8: no rule there can name it; rename the file", strconv.Quote(name), FileName)
}

// QuoteYAML is s as a YAML double-quoted scalar that yaml.v3 reads back
// as s: '"' and '\\' escaped, a printable character (strconv.IsPrint) as
// it is, and every other one escaped as YAML defines it, \t, \n, \r, or
// \xXX, \uXXXX, \UXXXXXXXX by its code point (in Go's quoting \xXX is a
// byte; in YAML it is the character U+00XX). ok is false when s is not
// UTF-8: a YAML string is Unicode text and cannot hold such bytes.
func QuoteYAML(s string) (q string, ok bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case strconv.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String(), true
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
	e := &RuleEdit{name: filepath.Join(root, FileName), mode: atomicfile.Default}
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
			// the rule must win over every other: first, as loaded
			if us := c.UserRules(); len(us) == 0 || us[0].Glob != glob || us[0].Schema != schema {
				item, _ := RuleLine(glob, schema)
				return nil, fmt.Errorf("%s: the rule added does not load as the first rule; nothing written; add it by hand: - %s", FileName, item)
			}
		}
	}
	return e, nil
}

// plan adds the rule for one glob to e.data; c is e.data loaded.
func (e *RuleEdit) plan(c *Config, glob, schema string) (bool, error) {
	item, err := RuleLine(glob, schema)
	if err != nil {
		return false, err
	}
	for i, r := range c.UserRules() {
		if r.Glob != glob {
			continue
		}
		if r.Schema == schema && !r.Ignore && r.Class == "" && r.Format == "" {
			return false, nil
		}
		return false, &Error{Problem: validate.ProblemAt(FileName, e.data, true, fmt.Sprintf("/files/%d", i),
			fmt.Sprintf("a rule for %s is already here; point its schema: at %s by hand", glob, schema))}
	}
	data, err := validate.PrependListItem(e.data, "files", item)
	var p state.Problem
	switch {
	case errors.As(err, &p):
		p.Path = FileName
		p.Message += "; add the rule by hand: - " + item
		return false, &Error{Problem: p}
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
