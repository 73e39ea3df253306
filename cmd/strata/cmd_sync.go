package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/syncer"
)

type syncOptions struct {
	Remote string
	DryRun bool
	JSON   bool
	Home   bool
}

func newSyncCommand(e *env) *cli.Command {
	var o syncOptions
	return &cli.Command{
		Name:      "sync",
		Usage:     "merge the state history with a git remote's and push it back",
		ArgsUsage: "[REMOTE]",
		Description: `REMOTE is a configured remote (default origin), a URL or a path. strata
fetches the remote's refs/strata/state into refs/strata-remotes/<remote>/state
with the git binary, records unrecorded local edits (source record), and
merges per path from the merge base: a path changed on one side only takes
that side's version; for a path changed on both, MEMORY.md and the graph are
merged (both sides' additions and deletions kept), two new Phase Outcomes of one name are
both kept (the later renumbered), and an L1 document takes the version
recorded later (ties by commit id) unless it breaks the initiative status
machine; the merge commit names the losing commit, and sync prints every
local version that lost with 'strata restore PATH --rev LOSER'. A merged
version that fails its schema keeps the local version. Changed kept files
are written atomically (a version that only adds at the end of the file on
disk is appended in place, in one write, so an agent's own append is never
lost), then the result is pushed with --force-with-lease; when the remote
moved meanwhile, the fetch and merge run again, up to four rounds.
--dry-run fetches and prints the plan, and changes nothing else.
The auto-memory file's history (refs/strata/home/state) is local: only
--home, or git config strata.syncHome true, syncs it too, with the remote's
refs/strata/home/state, after the state ref (sync_home in .strata.yaml, a
file that may come with the repository, is not honoured).
Exits 1 when a local file or a merged version was invalid (reported), 3 when
the remote cannot be reached (nothing is changed locally) or any other step
fails, such as a remote that moved again in every round (what was merged here
stays on the local ref: run strata sync again).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "fetch and show what would change; record, merge, write and push nothing", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
			&cli.BoolFlag{Name: "home", Usage: "also sync the auto-memory file's local history (refs/strata/home/state)", Destination: &o.Home},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("sync takes at most one REMOTE")
			}
			o.Remote = c.Args().First()
			if strings.HasPrefix(o.Remote, "-") {
				return usagef("sync %s: a remote's name cannot start with '-'", o.Remote)
			}
			return runSync(c.Context, e, o)
		},
	}
}

func runSync(ctx context.Context, e *env, o syncOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	// The write protocol for the edits the sync records first, as `strata
	// record` runs it: their L2 line and L3 upsert go out with them.
	agent := layers.New(eng, func(msg string) { fmt.Fprintf(e.Err, "strata: %s\n", msg) })
	rep, err := syncer.Sync(ctx, eng, syncer.Options{Remote: o.Remote, Cwd: e.Dir, DryRun: o.DryRun, AfterRecord: agent.AfterRecord})
	printPushed(e, eng)
	printNotWritten(e, eng) // of a push into this repository taken first, or a journal its first record completed
	if err != nil {
		return err
	}
	failed := syncFailed(rep)
	home, ignored := eng.SyncHome()
	if ignored && !o.Home && !o.JSON {
		fmt.Fprintln(e.Err, "strata: sync_home in .strata.yaml is not honoured (the file may come with the repository from anyone who can push, and it publishes your own auto-memory file); to sync it: strata sync --home, or git config strata.syncHome true")
	}
	var homeErr error
	if o.Home || home {
		// the state ref is synced by now, pushed and written: its report
		// is printed whatever the home ref's sync gives (attack36c M1: a
		// failed home sync hid it, its "lost local version" lines too, and
		// --json printed nothing)
		if homeErr = syncHome(ctx, e, o, eng, rep); homeErr == nil {
			failed = failed || syncFailed(rep.Home)
		}
	}
	sweepLater(e, eng)
	if o.JSON {
		if err := writeJSON(e.Out, rep); err != nil {
			return err
		}
	} else {
		printPendingPushPlan(e, rep.PendingPush)
		printSync(e, rep, nil)
		if rep.Home != nil {
			printSync(e, rep.Home, func(p string) string { return rep.Home.Shown[p] })
		}
	}
	switch {
	case homeErr != nil:
		return homeErr
	case failed:
		return errReported
	}
	return nil
}

// syncHome syncs the home ref (the auto-memory file's history) with the
// remote's refs/strata/home/state, as asked by --home or sync_home.
func syncHome(ctx context.Context, e *env, o syncOptions, eng *engine.Engine, rep *syncer.Report) error {
	hrep, err := syncer.SyncHome(ctx, eng, syncer.Options{Remote: o.Remote, Cwd: e.Dir, DryRun: o.DryRun})
	if err != nil {
		return err
	}
	rep.Home = hrep
	return nil
}

func syncFailed(rep *syncer.Report) bool {
	failed := len(rep.Problems) > 0
	for _, d := range rep.Decisions {
		failed = failed || d.KeptLocal != ""
	}
	return failed
}

// printSync prints a sync's report; shown, for the home ref, maps its tree
// names to the paths the user knows.
func printSync(e *env, r *syncer.Report, shown func(string) string) {
	path := func(p string) string {
		if shown != nil && shown(p) != "" {
			p = shown(p)
		}
		return p
	}
	name := func(p string) string {
		return state.ShownPath(path(p)) // a remote names its paths
	}
	label := "sync with "
	if shown != nil {
		label = "sync home (" + r.Tracking + ") with "
	}
	what := string(r.Result)
	switch {
	case r.RemoteHead == "" && r.Head == "":
		what = "nothing recorded on either side"
	case r.RemoteHead == "":
		what = "the remote has no state yet"
	case r.Result == engine.MergeUpToDate && (r.Pushed || r.DryRun && r.WouldPush):
		// nothing to take, something to give: "up-to-date at X, pushed"
		// read as a contradiction (attack41 L5)
		what = "ahead of the remote"
	}
	if r.Head != "" {
		what += " at " + state.ShortID(r.Head)
	}
	switch {
	case r.DryRun && r.WouldPush:
		what += " (dry run: nothing changed; the run would push)"
	case r.DryRun:
		what += " (dry run: nothing changed)"
	case r.Pushed && r.Retried:
		what += ", pushed after the remote moved " + times(r.Races)
	case r.Pushed:
		what += ", pushed"
	}
	fmt.Fprintf(e.Out, "%s%s: %s\n", label, r.Remote, what)
	for _, p := range r.Recorded {
		if slices.Contains(r.RecordedDeleted, p) {
			fmt.Fprintf(e.Out, "recorded the deletion of %s\n", name(p))
			continue
		}
		fmt.Fprintf(e.Out, "recorded %s\n", name(p))
	}
	for _, p := range r.WouldRecord {
		if slices.Contains(r.RecordedDeleted, p) {
			fmt.Fprintf(e.Out, "would record the deletion of %s\n", name(p))
			continue
		}
		fmt.Fprintf(e.Out, "would record %s\n", name(p))
	}
	verb, del := "wrote", "deleted"
	if r.DryRun {
		verb, del = "would write", "would delete"
	}
	for _, p := range r.Written {
		if slices.Contains(r.Deleted, p) {
			fmt.Fprintf(e.Out, "%s %s\n", del, name(p))
			continue
		}
		fmt.Fprintf(e.Out, "%s %s\n", verb, name(p))
	}
	for _, p := range r.Held {
		fmt.Fprintf(e.Out, "left %s unrecorded: a line is still being appended to it (the next record or sync takes it)\n", name(p))
	}
	for _, p := range r.Skipped {
		fmt.Fprintf(e.Out, "not written %s: edited on disk during the sync (recorded next)\n", name(p))
	}
	for _, p := range r.LeftAfterRestore {
		if !slices.Contains(r.MergedAgain, p) && !slices.Contains(r.MergeLater, p) {
			fmt.Fprintf(e.Out, "left %s as edited after an interrupted restore (recorded next, over the restored version)\n", name(p))
		}
	}
	// a file an interrupted restore owed was edited after that restore,
	// not during this sync (attack38d L1)
	when := func(p string) (string, string) {
		if slices.Contains(r.LeftAfterRestore, p) {
			return "after an interrupted restore", "the restored version"
		}
		return "during the sync", "the merged version"
	}
	for _, p := range r.MergedAgain {
		w, _ := when(p)
		fmt.Fprintf(e.Out, "merged %s again: edited on disk %s; the edit and %s\n", name(p), w, keptWork(r.DroppedAgain[p]))
	}
	for _, p := range r.MergeLater {
		w, v := when(p)
		if slices.Contains(r.Unended, p) {
			fmt.Fprintf(e.Out, "not written %s: edited on disk %s, a line still being appended; once it ends (or in %s), its next record merges it again with %s\n", name(p), w, engine.UnendedWait, v)
			continue
		}
		fmt.Fprintf(e.Out, "not written %s: edited on disk %s, and invalid; once fixed, its next record merges it again with %s\n", name(p), w, v)
	}
	for i, d := range r.Decisions {
		if i == maxReportLines {
			fmt.Fprintf(e.Out, "and %d more paths decided or kept local (strata sync --json lists them all)\n", len(r.Decisions)-i)
			break
		}
		switch {
		case d.KeptLocal != "":
			fmt.Fprintf(e.Out, "kept local %s: %s\n", name(d.Path), d.KeptLocal)
		case d.KeptBoth != "":
			fmt.Fprintf(e.Out, "kept both %s: both sides added it; the version recorded later is now %s\n", name(d.Path), name(d.KeptBoth))
		case d.MergedBoth && len(d.Dropped) > 0:
			fmt.Fprintf(e.Out, "merged %s: %s%s\n", name(d.Path), engine.MergedExcept, state.TermSafe(strings.Join(d.Dropped, "; ")))
		case d.MergedBoth:
			fmt.Fprintf(e.Out, "merged %s: both sides' edits kept\n", name(d.Path))
		case d.Why != "":
			side := "local"
			if d.Result == d.Theirs {
				side = "remote"
			}
			fmt.Fprintf(e.Out, "decided %s: %s version taken: %s\n", name(d.Path), side, d.Why)
		default:
			side := "local"
			if d.Result == d.Theirs {
				side = "remote"
			}
			fmt.Fprintf(e.Out, "decided %s: %s version recorded later (%s) wins over %s (%s); restore with strata restore %s --rev %s\n",
				name(d.Path), side, decidedAt(d.WinnerTime, d.WinnerNote), state.TermSafe(state.ShortID(d.Loser)), decidedAt(d.LoserTime, d.LoserNote),
				state.ShellPath(path(d.Path)), state.ShellWord(d.Loser)) // a command to paste: one word each, "~/" left to the shell
		}
	}
	printLost(e, r.Lost)
	printNotTaken(e, r.NotTaken, name)
	if len(r.Dropped) > 0 {
		what := firstOf(r.Dropped, "paths", name)
		verb := "dropped"
		if r.DryRun {
			verb = "would drop"
		}
		fmt.Fprintf(e.Err, "%s %s from the home history: it holds only %s (the auto-memory file); a remote's history put them there, never written here\n",
			verb, what, engine.HomeName)
	}
	for i, p := range r.Problems {
		if i == maxReportLines {
			fmt.Fprintf(e.Err, "and %d more problems (strata sync --json lists them all)\n", len(r.Problems)-i)
			break
		}
		fmt.Fprintln(e.Err, p.Error())
	}
}

// firstOf names ps (at least one) by its first: `PATH`, or `N NOUN (PATH
// and N-1 more)`.
func firstOf(ps []string, noun string, name func(string) string) string {
	if len(ps) == 1 {
		return name(ps[0])
	}
	return fmt.Sprintf("%d %s (%s and %d more)", len(ps), noun, name(ps[0]), len(ps)-1)
}

// printNotTaken says, in one line per reason, how many versions the merge
// took into the shared state without writing them here, and why, so that a
// clone whose .claude stays empty is told (attack33b F6): `not taken N
// files (PATH, …): private here: WHY; …`.
func printNotTaken(e *env, nt []syncer.NotTaken, name func(string) string) {
	var whys []string
	paths := map[string][]string{}
	for _, n := range nt {
		why := n.Why
		if strings.HasPrefix(why, syncer.WhyNotWritten) {
			why = "not written here (the lines on stderr say why)"
		}
		if _, ok := paths[why]; !ok {
			whys = append(whys, why)
		}
		paths[why] = append(paths[why], n.Path)
	}
	for _, why := range whys {
		ps := paths[why]
		what := firstOf(ps, "files", name)
		then := "status shows each as not taken, and strata restore PATH writes it once it can be written"
		if strings.HasPrefix(why, syncer.WhyPrivate) {
			then = "kept in the shared state and not written here; once the path is kept here, status shows it as not taken, and strata restore PATH writes it"
		}
		fmt.Fprintf(e.Out, "not taken %s: %s; %s\n", what, state.TermSafe(why), then)
	}
}

// decidedAt is a decided line's time of one side, with the note of a bounded
// time: "2026-11-22T10:00:05+01:00; its time 2099-… is ahead of this
// machine's clock; taken as now".
func decidedAt(t time.Time, note string) string {
	if note == "" {
		return t.Local().Format(time.RFC3339)
	}
	return t.Local().Format(time.RFC3339) + "; " + note
}

// maxReportLines is how many decisions, and how many problems, sync's
// text report prints before it says how many more there are: a remote can
// send up to 100 000 files that each fail their schema.
const maxReportLines = 100

// printLost names each local version a merge did not take, with the
// command that brings it back.
func printLost(e *env, lost []syncer.Loss) {
	for _, l := range lost {
		refused := ""
		if l.Refused != "" {
			refused = fmt.Sprintf(", which refused it: %q", l.Refused)
		}
		if l.CheckedOut {
			refused += ", after a checkout on the other machine"
		}
		fmt.Fprintf(e.Out, "lost local version of %s (%s) to %s%s; bring it back with strata restore %s --rev %s\n",
			state.ShownPath(l.Path), state.TermSafe(state.ShortID(l.Rev)), state.TermSafe(state.ShortID(l.Winner)), refused,
			state.ShellWord(l.Path), state.ShellWord(l.Rev))
	}
}

// times says how many times something happened: once, twice, N times.
func times(n int) string {
	switch n {
	case 0, 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprint(n, " times")
}
