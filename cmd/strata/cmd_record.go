package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/daemon"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type recordOptions struct {
	Paths  []string
	JSON   bool
	Layers bool
}

func newRecordCommand(e *env) *cli.Command {
	var o recordOptions
	return &cli.Command{
		Name:      "record",
		Usage:     "validate and record the current content of kept files",
		ArgsUsage: "[PATH...]",
		Description: `Records every changed kept file (or the given ones) as its own commit on
refs/strata/state; a deleted file is recorded as a deletion; unchanged content
records nothing. With --layers, a recorded change of an L1 file then runs the
write protocol as the watcher does: a workflow-state phase transition or
completion adds one line under "## Workflow state" in MEMORY.md, and L1 is
upserted into the L3 graph; those writes are recorded with source resolve.
While a watcher runs in this work tree, record runs the protocol without
--layers too: a change it records is one the watcher then finds recorded.
An invalid version is kept on refs/strata/rejected with its
errors, the recorded head keeps the last valid version, and strata exits 1.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
			&cli.BoolFlag{Name: "layers", Usage: "then run the write protocol (MEMORY.md lines, L3 upsert) as the watcher does", Destination: &o.Layers},
		},
		Action: func(c *cli.Context) error {
			o.Paths = c.Args().Slice()
			return runRecord(c.Context, e, o)
		},
	}
}

func runRecord(ctx context.Context, e *env, o recordOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	var kept []engine.Kept
	var refused state.Problems
	if len(o.Paths) == 0 {
		kept, err = eng.AllPaths()
		if err == nil {
			// the scan's private files: their versions no sync refused
			// yet stay unpublished (engine.NotePrivate); a note that
			// cannot be written is said, as a sync says it
			err = eng.NoteScanned(ctx)
			for _, p := range eng.TakeUnwrittenNotes() {
				fmt.Fprintln(e.Err, p.Error())
			}
		}
		if err == nil {
			kept = eng.RemoveTempLeftovers(kept)
			refused, err = eng.BadNames()
		}
	} else {
		kept, err = resolvePaths(eng, e, o.Paths)
		if err == nil {
			refused, err = missing(eng, kept)
		}
	}
	if err != nil {
		return err
	}
	for _, p := range refused {
		fmt.Fprintln(e.Err, p.Error())
	}
	outs, err := eng.Record(kept, state.SourceRecord)
	printPushed(e, eng)
	printNotWritten(e, eng)
	// The write protocol (L2 lines and L3 entities after L1 changes): when
	// asked, and when a watcher runs here, whose protocol would otherwise
	// never run for the change this record took from it.
	if err == nil && (o.Layers || watcherRuns(eng)) {
		var more []engine.Outcome
		more, err = layers.New(eng, func(msg string) { fmt.Fprintf(e.Err, "strata: %s\n", msg) }).AfterRecord(outs)
		outs = append(outs, layerOutcomes(outs, more)...)
	}
	failed := reportOutcomes(e, eng, outs, o.JSON)
	if err != nil {
		return err
	}
	if len(o.Paths) == 0 && unreadRulesWithhold(e, eng) {
		failed = true
	}
	if failed || len(refused) > 0 {
		return errReported
	}
	return nil
}

// unreadRulesWithhold names on stderr each recorded file whose edit on
// disk this record passed over because the rules saying what is private
// cannot be read (engine.PassedOverUnread), and reports whether there was
// one.
func unreadRulesWithhold(e *env, eng *engine.Engine) bool {
	over := eng.PassedOverUnread()
	for _, p := range over {
		fmt.Fprintf(e.Err, "strata: not recorded %s: %s\n", state.ShownPath(p.Path), p.Reason)
	}
	return len(over) > 0
}

// watcherRuns reports whether a watcher holds this work tree's lock.
func watcherRuns(eng *engine.Engine) bool {
	w, err := daemon.Info(eng)
	return err == nil && w.Running
}

// layerOutcomes is more, the outcomes of the write protocol, without
// those that only say again what outs says: the L2 file found invalid when
// the protocol read it, which this record already judged.
func layerOutcomes(outs, more []engine.Outcome) []engine.Outcome {
	var keep []engine.Outcome
	for _, o := range more {
		if o.Entry == nil && o.Rejected == nil && slices.ContainsFunc(outs, func(x engine.Outcome) bool { return x.Path == o.Path }) {
			continue
		}
		keep = append(keep, o)
	}
	return keep
}

// printNotWritten names, on stderr, each write an interrupted sync (or
// restore) owed that completing its journal left undone because the file
// was edited after the interruption: the edit is recorded over the merged
// (or restored) version, which stays one command away. An edit found in
// the temp file where the interrupted sync's swap had put it
// (NotWritten.Found) is named with the commit that recorded it.
func printNotWritten(e *env, eng *engine.Engine) {
	for _, n := range eng.TakeNotWritten() {
		if n.Found != "" {
			what, where := "an edit saved as "+n.Interrupted()+" wrote the file was left in a temp file", "recorded over "+n.Owed()
			if n.Rev == "" { // not a journal's: a killed Put or removal
				what, where = "a version a strata process killed while writing it left in a temp file, in no ref", "recorded"
			}
			if n.FoundRejected {
				where = "kept on " + eng.RejectedRef() + ", invalid"
			}
			fmt.Fprintf(e.Err, "strata: found %s: %s; it is %s (see it: strata show %s --rev %s), and the file on disk is recorded next\n",
				state.ShownPath(n.Path), what, where, state.ShellWord(n.Path), state.ShellWord(n.Found))
			continue
		}
		switch {
		case n.Merged != "" && n.Unended:
			fmt.Fprintf(e.Err, "strata: merged %s again: the line being appended when %s came is ended, or was waited for %s; merged with it, %s (%s)\n",
				state.ShownPath(n.Path), n.Owed(), engine.UnendedWait, keptWork(n.Dropped), state.ShortID(n.Merged))
			continue
		case n.Merged != "" && n.Rev == "": // kept for later (engine.MergeOverEdits): fixed now
			who := "a sync"
			if n.Restore {
				who = "a restore"
			}
			fmt.Fprintf(e.Err, "strata: merged %s again: the edit %s could not write over, invalid then, is fixed; merged with %s, %s (%s)\n",
				state.ShownPath(n.Path), who, n.Owed(), keptWork(n.Dropped), state.ShortID(n.Merged))
			continue
		case n.Merged != "":
			fmt.Fprintf(e.Err, "strata: merged %s again: edited on disk after %s; the edit is recorded, then merged with %s%s (%s)\n",
				state.ShownPath(n.Path), n.Interrupted(), n.Owed(), droppedNote(n.Dropped), state.ShortID(n.Merged))
			continue
		case n.NotTaken:
			fmt.Fprintf(e.Err, "strata: not taken %s: %s's version could not be written here (the line below says why); status shows it as not taken, and strata restore %s writes it once it can be written\n",
				state.ShownPath(n.Path), n.Interrupted(), state.ShellWord(n.Path))
			continue
		case n.Unended:
			fmt.Fprintf(e.Err, "strata: not written %s: edited on disk after %s, a line still being appended; once it ends (or in %s), its next record merges it again with %s (see it: strata show %s --rev %s)\n",
				state.ShownPath(n.Path), n.Interrupted(), engine.UnendedWait, n.Owed(), state.ShellWord(n.Path), state.ShellWord(n.Rev))
			continue
		case n.Later:
			fmt.Fprintf(e.Err, "strata: not written %s: edited on disk after %s, and invalid; once fixed, its next record merges it again with %s (see it: strata show %s --rev %s)\n",
				state.ShownPath(n.Path), n.Interrupted(), n.Owed(), state.ShellWord(n.Path), state.ShellWord(n.Rev))
			continue
		}
		if n.Restore {
			// the restore may have written it before it was killed, and the
			// edit may be invalid: said so that both read true
			// (attack38d L1.1, L1.3)
			fmt.Fprintf(e.Err, "strata: left %s as edited after an interrupted restore: the edit is recorded as any edit, over the restored version (see it: strata show %s --rev %s)\n",
				state.ShownPath(n.Path), state.ShellWord(n.Path), state.ShellWord(n.Rev))
			continue
		}
		fmt.Fprintf(e.Err, "strata: not written %s: edited on disk after %s; the edit is recorded over %s (see it: strata show %s --rev %s)\n",
			state.ShownPath(n.Path), n.Interrupted(), n.Owed(), state.ShellWord(n.Path), state.ShellWord(n.Rev))
	}
}

// printPushed names, on stderr, the files a push into this repository
// (it is another machine's sync remote) changed, which the record wrote
// first, or did not take, before recording anything (engine.takePush).
func printPushed(e *env, eng *engine.Engine) {
	for _, p := range eng.TakePushed() {
		fmt.Fprintf(e.Err, "strata: %s\n", p.Message())
	}
}

type outcomeJSON struct {
	Path     string         `json:"path"`
	Result   string         `json:"result"` // recorded, unchanged, rejected, skipped
	Entry    *state.Entry   `json:"entry,omitempty"`
	Rejected *state.Entry   `json:"rejected,omitempty"`
	Problems state.Problems `json:"problems,omitempty"`
	// restore only: the unrecorded version on disk it recorded before
	// replacing it, on the rejected ref when SavedRejected
	Saved         *state.Entry `json:"saved,omitempty"`
	SavedRejected bool         `json:"saved_rejected,omitempty"`
	// restore --all only: why it left the file (result held)
	Held *engine.Held `json:"held,omitempty"`
}

// reportOutcomes prints what recording did and reports whether anything was
// rejected or refused.
func reportOutcomes(e *env, eng *engine.Engine, outs []engine.Outcome, asJSON bool) bool {
	failed := false
	list := make([]outcomeJSON, 0, len(outs))
	for _, o := range outs {
		j := outcomeJSON{Path: o.Path, Entry: o.Entry, Rejected: o.Rejected, Problems: o.Problems}
		switch {
		case o.Entry != nil:
			j.Result = "recorded"
			if !asJSON {
				fmt.Fprintf(e.Out, "%s %s (%s)\n", o.Entry.Action, state.ShownPath(o.Path), state.ShortID(o.Entry.Commit))
			}
		case o.Rejected != nil:
			j.Result = "rejected"
		case o.Invalid():
			j.Result = "skipped"
		default:
			j.Result = "unchanged"
		}
		if o.Invalid() {
			failed = true
		}
		if !asJSON && len(o.Problems) > 0 {
			fmt.Fprintln(e.Err, o.Problems.Error())
			if o.Rejected != nil {
				fmt.Fprintf(e.Err, "strata: %s rejected; kept on %s (%s)\n", state.ShownPath(o.Path), eng.RejectedRefOf(o.Rejected), state.ShortID(o.Rejected.Commit))
			}
		}
		list = append(list, j)
	}
	if asJSON {
		_ = writeJSON(e.Out, list)
	}
	return failed
}

// missing reports named paths that neither exist nor were ever recorded:
// there is nothing to record, and saying nothing would hide a typo.
func missing(eng *engine.Engine, kept []engine.Kept) (state.Problems, error) {
	var ps state.Problems
	for _, k := range kept {
		if f, p := eng.Read(k); p != nil || f.Exists {
			continue
		}
		if _, err := eng.Show(k.Path, engine.Point{}); err == nil {
			continue // a deletion to record
		} else if !errors.Is(err, state.ErrNotFound) {
			return nil, err
		}
		ps = append(ps, state.Problem{Path: k.Path, Message: "no such file, and never recorded"})
	}
	return ps, nil
}

// keptWork says what a merge over an edit kept: both sides' work, or
// all but what it names as dropped (a graph relation to an entity the
// other side deleted).
func keptWork(dropped []string) string {
	if len(dropped) == 0 {
		return "both sides' work kept"
	}
	return engine.MergedExcept + state.TermSafe(strings.Join(dropped, "; "))
}

// droppedNote is keptWork's words for a line that claims nothing kept:
// empty when nothing was dropped.
func droppedNote(dropped []string) string {
	if len(dropped) == 0 {
		return ""
	}
	return ", " + keptWork(dropped)
}
