package layers

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/markdown"
	"github.com/strata-dev/strata/state"
)

// The L2 file as `strata memory` reads and edits it.

type (
	// Section is one heading of the L2 file with its list items.
	Section = markdown.Section
	// MemoryWarning is a parse warning of the L2 file (too long, an
	// unclosed code fence, a repeated heading, lists nested past
	// markdown.MaxNesting, reading stopped at markdown.MaxBlocks or
	// markdown.MaxLines).
	MemoryWarning = markdown.Warning
)

// CleanHeading is a section name as the L2 file's headings are compared.
func CleanHeading(s string) string { return markdown.CleanHeading(s) }

// MemoryFile reads the L2 file. A configured memory path no rule keeps (an
// ignore: true rule, a private file) is a *engine.PathError wrapping
// engine.ErrNotKept; a problem reading it comes back as state.Problems.
func (a *Agent) MemoryFile() (engine.File, error) {
	k, ok := a.memoryKept()
	if !ok {
		l2 := a.Eng.Config().L2()
		reason := "the memory file is not a kept path (see strata status and .strata.yaml)"
		if why := a.Eng.Config().Private(l2); why != "" {
			// the reason and the fix, as status gives them
			notKept, then := engine.Private{Path: l2, Reason: why}.NotKept()
			if reason = "the memory file is " + notKept; then != "" {
				reason += "; " + then
			}
		}
		return engine.File{}, &engine.PathError{Path: l2, Reason: reason, Err: engine.ErrNotKept}
	}
	if err := a.Eng.CheckWritable(k.Path); err != nil {
		return engine.File{Kept: k}, err // a link out of the work tree or into .git: exit 3, as every such refusal
	}
	f, p := a.Eng.Read(k)
	if p != nil {
		return f, state.Problems{*p}
	}
	return f, nil
}

// Outline is the L2 file's structure.
type Outline struct {
	Lines    int
	Sections []Section
	Warnings []MemoryWarning
}

// MemoryOutline parses the L2 file's content.
func MemoryOutline(content []byte) (Outline, error) {
	d, err := markdown.Parse(content)
	if err != nil {
		return Outline{}, err
	}
	return Outline{Lines: d.Lines(), Sections: d.Sections(), Warnings: d.Warnings()}, nil
}

// AddLearning adds "- text" as the last item under section of the L2 file f
// (creating the heading at the end when missing), once; text is written as
// ItemText writes it, one line with every control character escaped, as the
// protocol's lines are (attack33 L1: an ESC from an agent's text reached
// every cat and git diff of the file). Unrecorded edits of
// the file are recorded first, so the addition is its own change; the new
// version is checked, written atomically and recorded with source record.
// added is false when an item with the same text is already there; an
// invalid new version, or a file whose content would not read the item back
// (it ends inside an open code fence, say), writes nothing and is returned
// as its problems. The new version replaces the file only while it is
// still f (engine.Put): when the file changed meanwhile (another memory
// add, an agent's edit), it is read again and the item added to that, so
// neither edit is lost; after engine.EditTries such tries the error is an
// *engine.ChangedError and nothing is added.
func (a *Agent) AddLearning(f engine.File, section, text string) (added bool, o engine.Outcome, err error) {
	first := true
	err = engine.Retry(func() error {
		if !first {
			var err error
			if f, err = a.MemoryFile(); err != nil {
				return err
			}
		}
		first = false
		var err error
		added, o, err = a.addLearning(f, section, text)
		return err
	})
	return added, o, err
}

// memoryDoor is the check before every write of the L2 file, by the layer
// protocol and by `memory add`, once the file as it is has been recorded
// (and found valid under its schema): its name is a Markdown file's
// (config.MemoryName, which .strata.yaml's memory: passed when it loaded),
// also where it really is, and what is on disk now is text (UTF-8, no NUL byte), so that strata
// never appends its lines to a file of another kind (attack23-hostile F1).
// A missing file passes: it is created as a Markdown file (unless a sync
// did not take the ref's version there: engine.Put's *NotTakenError).
func memoryDoor(eng *engine.Engine, f engine.File) error {
	if err := config.MemoryName(f.Path); err != nil {
		return err
	}
	// and where it really is, through a folder linked to another one of
	// the work tree (notes -> .claude/agents: attack23-recheck N2)
	if eng != nil {
		if real, ok := eng.RealRel(f.Path); ok {
			if err := config.MemoryName(real); err != nil {
				return fmt.Errorf("%s (it is %s)", err, state.TermSafe(real))
			}
		}
	}
	if f.Exists && (!utf8.Valid(f.Content) || bytes.IndexByte(f.Content, 0) >= 0) {
		return errors.New("it is not UTF-8 text, so not a Markdown file; left unchanged")
	}
	return nil
}

// addLearning is one try of AddLearning, on f as read.
func (a *Agent) addLearning(f engine.File, section, text string) (added bool, o engine.Outcome, err error) {
	if f.Exists {
		outs, err := a.Eng.Record([]config.Kept{f.Kept}, state.SourceRecord)
		if err != nil {
			return false, o, err
		}
		// The file as it is fails its check (git conflict markers, say):
		// named at its own lines, nothing added to it.
		if len(outs) > 0 && outs[0].Invalid() {
			ps := append(state.Problems{}, outs[0].Problems...)
			for i := range ps {
				if !ps[i].Warning {
					ps[i].Message += "; the learning was not added, file left unchanged"
				}
			}
			return false, o, ps
		}
	}
	if err := memoryDoor(a.Eng, f); err != nil {
		return false, o, state.Problems{{Path: f.Path, Message: err.Error() + "; the learning was not added"}}
	}
	data, changed, err := markdown.AddItem(f.Content, section, 0, ItemText(text))
	var ue *markdown.UnsafeError
	switch {
	case errors.As(err, &ue): // the file's content is in the way, at that line
		return false, o, state.Problems{{Path: f.Path, Line: ue.Line, Message: ue.Reason + "; file left unchanged"}}
	case errors.Is(err, markdown.ErrUnsafe):
		return false, o, state.Problems{{Path: f.Path, Message: err.Error()}}
	}
	if err != nil {
		return false, o, err
	}
	if !changed {
		return false, o, nil
	}
	o, err = a.Eng.Put(f.Kept, f.ID(), data, state.SourceRecord)
	var nt *engine.NotTakenError
	if errors.As(err, &nt) {
		return false, o, state.Problems{{Path: f.Path, Message: nt.Reason() + "; the learning was not added"}}
	}
	if err != nil {
		return false, o, err
	}
	if !o.Written {
		return false, o, o.Problems
	}
	return true, o, nil
}

// LintMemory reports the L2 file's problems: its schema's, then, when it is
// valid, the parser's warnings.
func (a *Agent) LintMemory(f engine.File) state.Problems {
	problems := state.Problems{}
	if !f.Exists {
		return problems
	}
	problems = append(problems, a.Eng.ValidateContent(f.Path, f.Content, f.Schema)...)
	if problems.Invalid() {
		return problems
	}
	out, err := MemoryOutline(f.Content)
	if err != nil {
		return append(problems, state.Problem{Path: f.Path, Message: err.Error()})
	}
	for _, w := range out.Warnings {
		problems = append(problems, state.Problem{Path: f.Path, Line: w.Line, Col: w.Col, Message: w.Message, Warning: true})
	}
	return problems
}
