package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type restoreOptions struct {
	Paths  []string
	All    bool
	At     string
	Rev    string
	JSON   bool
	DryRun bool
}

func newRestoreCommand(e *env) *cli.Command {
	var o restoreOptions
	return &cli.Command{
		Name:      "restore",
		Usage:     "put kept files back as they were recorded",
		ArgsUsage: "PATH... | --all",
		Description: `Writes each PATH as recorded at --at T, in --rev R (a commit of
refs/strata/state or of your own branches), or by default its last recorded
version; atomically, and records the restored version with source restore.
A file whose deletion was recorded comes back, by default, as its last
recorded version before the deletion. --all --at T puts the whole kept state
back as of T (files that did not exist then are removed; a removed Phase
Outcome or resolution stays recorded, and a line says that only its
recorded bytes may be written there again). An unrecorded
version on disk is recorded first, so nothing is lost (an invalid one on
refs/strata/rejected, named with the "strata show PATH --rev ID" that
prints it); a file it would replace or remove but cannot read to record
(larger than max_size, unreadable) stops the restore before anything is
written (exit 3), and a file edited while the restore runs is left as
edited and reported "not restored PATH: edited on disk during the restore
(recorded next)" (exit 1). --all leaves a file whose version on disk is
invalid as it is, reported "not restored PATH: its version on disk is
invalid ..." (exit 1), that version kept on refs/strata/rejected (saved
there first when no record had kept it); restore PATH replaces it on
purpose. --all also
leaves a Claude Code settings file (or .mcp.json) whose version then, or
whose removal, changes what Claude Code runs (as sync judges a remote
version), naming the restore of that path that takes it (exit 1).
--dry-run lists what would be saved, written, removed and left, exits as
the restore would, and changes
nothing. Paths outside the kept files, "..", absolute paths and symlinks
are refused and nothing is written.`,
		Flags: append(pointFlags(&o.At, &o.Rev),
			&cli.BoolFlag{Name: "all", Usage: "restore every kept file", Destination: &o.All},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
			&cli.BoolFlag{Name: "dry-run", Usage: "list what would be saved, written and removed; change nothing", Destination: &o.DryRun},
		),
		Action: func(c *cli.Context) error {
			o.Paths = c.Args().Slice()
			return runRestore(e, o)
		},
	}
}

func runRestore(e *env, o restoreOptions) error {
	switch {
	case o.All && len(o.Paths) > 0:
		return usagef("restore takes PATHs or --all, not both")
	case !o.All && len(o.Paths) == 0:
		return usagef("restore needs PATH... or --all")
	case o.All && o.At == "" && o.Rev == "":
		return usagef("restore --all needs --at T or --rev R")
	}
	p, err := parsePoint(e, o.At, o.Rev)
	if err != nil {
		return err
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	var kept []engine.Kept
	if !o.All {
		if kept, err = resolvePaths(eng, e, o.Paths); err != nil {
			return err
		}
	}
	if o.DryRun {
		var plan engine.RestorePlan
		if o.All {
			plan, err = eng.PlanRestoreAll(p)
		} else {
			plan, err = eng.PlanRestore(kept, p)
		}
		if err != nil {
			return err
		}
		return printRestorePlan(e, eng, plan, p, o.JSON)
	}
	var outs []engine.Outcome
	if o.All {
		outs, err = eng.RestoreAll(p)
	} else {
		outs, err = eng.Restore(kept, p)
	}
	printPushed(e, eng)
	printNotWritten(e, eng) // of a sync or restore killed earlier, whose journal this one completed
	if err != nil {
		return err
	}
	late := false // not everything asked for was restored: exit 1
	for _, out := range outs {
		late = late || out.Late || out.Held != nil
	}
	// an unrecorded step the restore saved first gets the write protocol
	// (its MEMORY.md line), as any recorded step: no watcher finds it again;
	// not when the restore put the layers themselves back (--all, or the L2
	// or graph file named): they are as they were then, as asked
	var saves []engine.Outcome
	if !o.All && !slices.ContainsFunc(outs, func(x engine.Outcome) bool {
		return x.Path == eng.Config().L2() || x.Path == eng.Config().Graph
	}) {
		if saves, err = layers.New(eng, func(msg string) { fmt.Fprintf(e.Err, "strata: %s\n", msg) }).AfterSaves(outs); err != nil {
			return err
		}
	}
	if o.JSON {
		_ = writeJSON(e.Out, restoreJSON(outs))
		if late {
			return errReported
		}
		return nil
	}
	n := 0
	for _, out := range outs {
		if out.Held != nil {
			if out.Held.Invalid {
				heldNote(e, eng, *out.Held, p, false)
			} else {
				fmt.Fprintln(e.Out, heldLine("not restored", out.Held))
			}
			continue
		}
		if out.Late {
			// changed on disk after the restore saved it: that edit is
			// newer, left in place, and recorded next as any edit
			why := "edited on disk during the restore (recorded next)"
			if len(out.Problems) > 0 {
				why = out.Problems[0].Message
			}
			fmt.Fprintf(e.Out, "not restored %s: %s\n", state.ShownPath(out.Path), why)
			continue
		}
		if out.Saved != nil && out.Written {
			fmt.Fprintln(e.Out, eng.SavedNote(out))
		}
		switch {
		case out.Entry != nil && out.Entry.Action == state.ActionDelete:
			n++
			fmt.Fprintf(e.Out, "deleted %s (not recorded at %s) (%s)\n", state.ShownPath(out.Path), p, state.ShortID(out.Entry.Commit))
			appendOnlyNote(e, eng, out.Path)
		case out.Removed:
			// never recorded (an invalid version, saved on the rejected ref
			// first): removed, with no deletion to record
			n++
			fmt.Fprintf(e.Out, "deleted %s (not recorded at %s)\n", state.ShownPath(out.Path), p)
			appendOnlyNote(e, eng, out.Path)
		case out.Revived != nil && out.Written:
			n++
			id := ""
			if out.Entry != nil {
				id = " (" + state.ShortID(out.Entry.Commit) + ")"
			}
			fmt.Fprintf(e.Out, "restored %s from %s%s\n", state.ShownPath(out.Path), revivedFrom(out.Revived), id)
		case out.Entry != nil:
			n++
			fmt.Fprintf(e.Out, "restored %s from %s (%s)\n", state.ShownPath(out.Path), p, state.ShortID(out.Entry.Commit))
		case out.Written:
			// Written back, but equal to the recorded head (it had been
			// overwritten by an unrecorded or rejected version): no new commit.
			n++
			fmt.Fprintf(e.Out, "restored %s from %s\n", state.ShownPath(out.Path), p)
		}
	}
	for _, s := range saves {
		if n := layers.SavedStepNote(s); n != "" {
			fmt.Fprintln(e.Out, n)
		}
	}
	switch {
	case late:
		return errReported // not everything asked for was restored
	case n == 0:
		fmt.Fprintf(e.Out, "nothing to restore: the files already match %s\n", p)
	}
	return nil
}

// heldNote prints why restore --all leaves h as it is (its problem lines
// on stderr, as record prints them) and what the user may do: fix it, or
// replace it anyway with the restore of that one path, which saves it
// first (or delete it, when the point has no version of it); dry words
// it as --dry-run. A git user's uncommitted work is not overwritten by a
// checkout that cannot keep it either.
func heldNote(e *env, eng *engine.Engine, h engine.Held, p engine.Point, dry bool) {
	fmt.Fprintln(e.Err, h.Problems.Error())
	where := "on no ref yet"
	switch {
	case h.Rejected != nil && h.Saved:
		where = "saved now on " + eng.RejectedRef() + ", " + state.ShortID(h.Rejected.Commit)
	case h.Rejected != nil:
		where = "kept only on " + eng.RejectedRef() + ", " + state.ShortID(h.Rejected.Commit)
	case dry:
		where = "on no ref yet: the restore saves it on " + eng.RejectedRef() + " first"
	}
	verb, left := "not restored", "it was left as it is"
	if dry {
		verb, left = "would not restore", "it would be left as it is"
	}
	next := "fix it, or delete it yourself"
	if !h.Remove {
		next = "fix it, or replace it anyway, its version staying on " + eng.RejectedRef() + ": strata restore " + state.ShellWord(h.Path) + " " + pointArgs(p)
	}
	fmt.Fprintf(e.Out, "%s %s: its version on disk is invalid (%s), so %s; %s\n", verb, state.ShownPath(h.Path), where, left, next)
}

// pointArgs is the flag naming p on a command line strata prints.
func pointArgs(p engine.Point) string {
	if p.Rev != "" {
		return "--rev " + state.ShellWord(p.Rev)
	}
	return "--at " + p.At.Format(time.RFC3339)
}

// restoreJSON is restore's --json: per path, result restored (written: a
// new version, or the recorded one put back over an unrecorded or rejected
// one), deleted, skipped (edited on disk during the restore), held (left
// by --all: its version on disk is invalid, or it changes what Claude Code
// runs; engine.Held) or unchanged,
// with the entry it recorded and the unrecorded version it saved first.
func restoreJSON(outs []engine.Outcome) []outcomeJSON {
	list := make([]outcomeJSON, 0, len(outs))
	for _, o := range outs {
		j := outcomeJSON{Path: o.Path, Entry: o.Entry, Problems: o.Problems, Result: "unchanged"}
		switch {
		case o.Held != nil:
			j.Result, j.Held = "held", o.Held
		case o.Late:
			j.Result = "skipped"
		case o.Entry != nil && o.Entry.Action == state.ActionDelete, o.Removed:
			j.Result = "deleted"
		case o.Written || o.Entry != nil:
			j.Result = "restored"
		}
		if o.Saved != nil && !o.Late {
			j.Saved, j.SavedRejected = o.Saved, o.SavedRejected
		}
		list = append(list, j)
	}
	return list
}

// appendOnlyNote says, after the line of a restore deleting path, that a
// Phase Outcome or resolution stays recorded: the history rules judge a
// file written there later against its last version, so only those bytes
// may come back (docs/contract.md §1, rules).
func appendOnlyNote(e *env, eng *engine.Engine, path string) {
	k, ok := eng.Config().Classify(path)
	if !ok || !k.Class.Immutable() {
		return
	}
	fmt.Fprintf(e.Out, "  %s is append-only: its recorded version stays in history, and only those bytes may be written there again (strata restore %s); new content goes in a new numbered file\n",
		state.ShownPath(path), state.ShellWord(path))
}

// heldLine says why restore --all left a file (engine.Held), starting
// with what (not restored, would leave), and how the user takes it: by
// name, from the same commit, once they have read it; a removal by hand.
func heldLine(what string, h *engine.Held) string {
	word := state.ShellWord(h.Path)
	changes := engine.ShownChanges(h.Changes)
	if h.Remove {
		return fmt.Sprintf("%s %s: it was not recorded at %s, and removing it changes what Claude Code runs (%s); restore --all leaves that to you: remove it yourself if you mean to (rm %s)",
			what, state.TermSafe(h.Path), state.ShortID(h.Commit), changes, word)
	}
	return fmt.Sprintf("%s %s: its version at %s changes what Claude Code runs (%s), and restore --all writes it only when you name it: read it (strata show %s --rev %s), then take it if you trust it (strata restore %s --rev %s)",
		what, state.TermSafe(h.Path), state.ShortID(h.Commit), changes, word, h.Commit, word, h.Commit)
}

// revivedFrom names the version a restore brought back for a deleted file.
func revivedFrom(r *engine.Revived) string {
	return fmt.Sprintf("%s, its last recorded version before it was deleted at %s",
		state.ShortID(r.Commit), r.DeletedAt.Local().Format(time.RFC3339))
}

// printRestorePlan prints what restore --dry-run found, in the order the
// restore would do it: save, write, remove.
func printRestorePlan(e *env, eng *engine.Engine, plan engine.RestorePlan, p engine.Point, asJSON bool) error {
	if asJSON {
		_ = writeJSON(e.Out, plan)
		if len(plan.Held) > 0 {
			return errReported // as the restore would
		}
		return nil
	}
	// the writes an interrupted sync or restore still owes, which the run
	// makes first: the plan is judged as they will leave the files
	// (attack38d L1.4: "the files already match" while they did not)
	owed, _ := eng.PendingWrites()
	if len(owed) > 0 {
		fmt.Fprintf(e.Out, "an interrupted %s still owes %s (%s): the run writes %s first\n", eng.InterruptedWriter(),
			engine.Plural(len(owed), "1 file", fmt.Sprintf("%d files", len(owed))), state.ShownPaths(owed, " "), engine.Plural(len(owed), "it", "them"))
	}
	pp, _ := eng.PendingPush()
	printPendingPushPlan(e, pp)
	for _, h := range plan.Held {
		if h.Invalid {
			heldNote(e, eng, h, p, true)
		}
	}
	for _, s := range plan.Save {
		path := state.ShownPath(s.Path)
		switch {
		case s.Deleted && s.Invalid && s.Rejected != nil:
			fmt.Fprintf(e.Out, "the unrecorded deletion of %s, invalid, is kept on %s (%s)\n", path, eng.RejectedRef(), state.ShortID(s.Rejected.Commit))
		case s.Deleted && s.Invalid:
			fmt.Fprintf(e.Out, "would record the unrecorded deletion of %s first (on %s, invalid)\n", path, eng.RejectedRef())
		case s.Deleted:
			fmt.Fprintf(e.Out, "would record the unrecorded deletion of %s first\n", path)
		case s.Invalid && s.Rejected != nil:
			fmt.Fprintf(e.Out, "would replace the invalid unrecorded %s, kept on %s (%s)\n", path, eng.RejectedRef(), state.ShortID(s.Rejected.Commit))
		case s.Invalid:
			fmt.Fprintf(e.Out, "would save the unrecorded %s first (on %s, invalid)\n", path, eng.RejectedRef())
		default:
			fmt.Fprintf(e.Out, "would save the unrecorded %s first\n", path)
		}
	}
	for _, w := range plan.Write {
		if w.Revived != nil {
			fmt.Fprintf(e.Out, "would write %s from %s\n", state.ShownPath(w.Path), revivedFrom(w.Revived))
		} else {
			fmt.Fprintf(e.Out, "would write %s from %s\n", state.ShownPath(w.Path), plan.Point)
		}
	}
	for _, r := range plan.Remove {
		fmt.Fprintf(e.Out, "would delete %s (not recorded at %s)\n", state.ShownPath(r), plan.Point)
		appendOnlyNote(e, eng, r)
	}
	for i := range plan.Held {
		if !plan.Held[i].Invalid {
			fmt.Fprintln(e.Out, heldLine("would leave", &plan.Held[i]))
		}
	}
	if len(plan.Write)+len(plan.Remove)+len(plan.Held) == 0 {
		if len(owed) > 0 {
			fmt.Fprintf(e.Out, "nothing more to restore: once those are written, the files match %s\n", plan.Point)
		} else {
			fmt.Fprintf(e.Out, "nothing to restore: the files already match %s\n", plan.Point)
		}
	}
	fmt.Fprintln(e.Out, "dry run: nothing changed")
	if len(plan.Held) > 0 {
		return errReported // as the restore would
	}
	return nil
}
