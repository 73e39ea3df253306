package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/daemon"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/syncer"
)

type statusOptions struct{ JSON bool }

func newStatusCommand(e *env) *cli.Command {
	var o statusOptions
	return &cli.Command{
		Name:  "status",
		Usage: "list kept files, whether they are valid, and when they were last recorded",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error { return runStatus(e, o) },
	}
}

type statusJSON struct {
	Ref     string                  `json:"ref"`
	Head    string                  `json:"head,omitempty"`
	Watcher daemon.Status           `json:"watcher"`
	Remotes []syncer.Tracking       `json:"remotes"`
	Lost    []syncer.Loss           `json:"lost"`             // local versions past syncs did not take
	Owed    []string                `json:"owed,omitempty"`   // files an interrupted sync has yet to write
	Pushed  *engine.PendingPushInfo `json:"pushed,omitempty"` // a move of the ref from outside strata not yet taken
	// MergeLater: files whose edit, invalid, a sync could not write over;
	// the record that finds one fixed merges it with the merged version.
	MergeLater []string `json:"merge_later,omitempty"`
	// MergeLaterError: the file of those merges cannot be read (some may
	// be missing from MergeLater).
	MergeLaterError string `json:"merge_later_error,omitempty"`
	// NotTakenError: the sync's not-taken note cannot be read; until it is
	// removed, no absent kept file is recorded as a deletion.
	NotTakenError string              `json:"not_taken_error,omitempty"`
	Layers        layersJSON          `json:"layers"`
	Files         []engine.FileStatus `json:"files"`
	Private       []engine.Private    `json:"private,omitempty"` // matched by a rule, withheld as private
}

// layersJSON is which layers exist and the row of the degradation matrix.
type layersJSON struct {
	layers.Layers
	Tier string `json:"tier"`
}

func runStatus(e *env, o statusOptions) error {
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	pushed, err := eng.PendingPush()
	if err != nil {
		return err
	}
	files, err := eng.StatusWithPush(pushed)
	if err != nil {
		return err
	}
	// A file kept but for a control character in its name is invalid, as
	// strata validate says: one row, its problem line quoting the name.
	bad, err := eng.BadNames()
	if err != nil {
		return err
	}
	for _, p := range bad {
		files = append(files, engine.FileStatus{Path: p.Path, State: "invalid", Problems: state.Problems{p}})
	}
	head, err := eng.Head()
	if err != nil {
		return err
	}
	w, err := daemon.Info(eng)
	if err != nil {
		return err
	}
	remotes, err := syncer.Remotes(eng)
	if err != nil {
		return err
	}
	lost, err := syncer.Losses(eng)
	if err != nil {
		return err
	}
	owed, err := eng.PendingWrites()
	if err != nil {
		return err
	}
	later, invalidLater, unendedLater, lerr := eng.PendingMerges()
	laterErr := ""
	if lerr != nil {
		laterErr = lerr.Error()
	}
	damaged := eng.NotTakenDamaged()
	agent := layers.New(eng, nil)
	present := agent.Present()
	lj := layersJSON{Layers: present, Tier: present.Tier()}
	if o.JSON {
		if files == nil {
			files = []engine.FileStatus{}
		}
		return writeJSON(e.Out, statusJSON{Ref: eng.StateRef(), Head: head, Watcher: w, Remotes: remotes, Lost: lost, Owed: owed, Pushed: pushed, MergeLater: later, MergeLaterError: laterErr, NotTakenError: damaged, Layers: lj, Files: files, Private: eng.Withheld()})
	}
	defer printWithheld(e, eng)
	l2, l3 := agent.Withheld()
	fmt.Fprintf(e.Out, "layers: %s (tier %s)\n", layerList(lj.Layers, l2, l3), lj.Tier)
	if w.Running {
		fmt.Fprintf(e.Out, "watcher: running (pid %d, since %s; %d changes recorded, %d rejected)\n",
			w.PID, w.Since.Local().Format(time.RFC3339), w.Recorded, w.Rejected)
	} else {
		fmt.Fprintln(e.Out, "watcher: not running (start it with strata watch)")
	}
	if w.Running && w.SyncRemote != "" {
		last := "never"
		if !w.LastSync.IsZero() {
			last = w.LastSync.Local().Format(time.RFC3339)
		}
		fmt.Fprintf(e.Out, "sync: with %s, last synced %s", w.SyncRemote, last)
		if w.LastSyncError != "" {
			fmt.Fprintf(e.Out, "; failing (%d in a row): %s", w.SyncFailures, w.LastSyncError)
		}
		fmt.Fprintln(e.Out)
	}
	for _, r := range remotes {
		fmt.Fprintf(e.Out, "remote %s: %d ahead, %d behind (as last fetched, %s)\n", r.Remote, r.Ahead, r.Behind, state.ShortID(r.Head))
	}
	printLost(e, lost)
	if len(owed) > 0 {
		after := "sync: interrupted after its merge"
		if eng.InterruptedWriter() == "restore" {
			after = "restore: interrupted after its commit"
		}
		fmt.Fprintf(e.Out, "%s; not yet written: %s (the next strata record or sync writes them; until then they show as modified)\n", after, state.ShownPaths(owed, " "))
	}
	printPendingPush(e, pushed)
	if why, standIn := eng.WorktreeHeadProblem(); why != "" && !standIn {
		// said here too, not only by doctor: a push landing now would be
		// recorded over (attack39b F2)
		where := filepath.Join(eng.GitDir(), "strata", "worktree-head")
		if rel, err := filepath.Rel(eng.Root(), where); err == nil && filepath.IsLocal(rel) {
			where = rel
		}
		fmt.Fprintf(e.Out, "worktree-head: %s: %s, and the state ref's reflog holds no move of strata's either: strata cannot tell what the files here follow, so a push into this repository now would be recorded over (strata record writes it again)\n",
			state.ShownPath(filepath.ToSlash(where)), state.TermSafe(why))
	}
	printYoungForeign(e, eng)
	var invalid, unended, owedMerge []string
	for _, p := range later {
		switch {
		case invalidLater[p]:
			invalid = append(invalid, p)
		case unendedLater[p]:
			unended = append(unended, p)
		default:
			owedMerge = append(owedMerge, p)
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintf(e.Out, "sync: not yet merged: %s (edited during a sync and invalid; once fixed, the next strata record merges each with the merged version)\n", state.ShownPaths(invalid, " "))
	}
	if len(unended) > 0 {
		fmt.Fprintf(e.Out, "sync: not yet merged: %s (a line was still being appended when another version, a sync's, a restore's or a push's, came; once it ends, or %s after, the next strata record merges them)\n", state.ShownPaths(unended, " "), engine.UnendedWait)
	}
	if len(owedMerge) > 0 {
		// owed by a command killed before it merged, never invalid
		// (attack40c L1: said "edited during a sync and invalid")
		fmt.Fprintf(e.Out, "sync: not yet merged: %s (an edit of it and another version, a sync's, a restore's or a push's, are merged by the next strata record: a command that was to merge them was interrupted)\n", state.ShownPaths(owedMerge, " "))
	}
	if laterErr != "" {
		fmt.Fprintf(e.Out, "sync: merges kept for later cannot be read: %s (a MEMORY.md or graph edited during a sync may not be merged again: check it holds the other machine's lines, then remove the file)\n", state.TermSafe(laterErr))
	}
	if damaged != "" {
		fmt.Fprintf(e.Out, "sync: the not-taken note cannot be read: %s (no absent kept file is recorded as a deletion until it is removed: look at it, then rm it)\n", state.TermSafe(damaged))
	}
	if head == "" && pushed == nil {
		fmt.Fprintf(e.Out, "%s: nothing recorded yet (run strata init)\n", eng.StateRef())
	} else if head == "" {
		fmt.Fprintf(e.Out, "%s: deleted (see the push line above)\n", eng.StateRef())
	} else if pushed != nil && pushed.PutBack != "" && pushed.From != "" {
		// the refused head is not this machine's: the table below is of
		// the head the next record puts the ref back at (attack40d F6)
		fmt.Fprintf(e.Out, "%s at %s, a push the next strata record puts back at %s (the files below as of %s)\n", eng.StateRef(), state.ShortID(head), state.ShortID(pushed.From), state.ShortID(pushed.From))
	} else {
		fmt.Fprintf(e.Out, "%s at %s\n", eng.StateRef(), state.ShortID(head))
	}
	if len(files) == 0 {
		fmt.Fprintln(e.Out, "no kept files")
		return nil
	}
	tw := tabwriter.NewWriter(e.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tCLASS\tSTATE\tLAST RECORDED")
	for _, f := range files {
		last := "-"
		if f.LastRecorded != nil {
			last = f.LastRecorded.Local().Format(time.RFC3339)
		}
		class := state.TermSafe(string(f.Class)) // a name (config.checkClass); quoted all the same
		if class == "" {
			class = "-"
		}
		// Quoted as log quotes it: no escape reaches the terminal, and no
		// 0xFF byte (tabwriter's escape) the table.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", state.ShownPath(f.Path), class, f.State, last)
	}
	tw.Flush()
	printProblemSample(e, files)
	return nil
}

// statusProblemLines is how many problem lines status prints after its
// table; strata validate prints them all.
const statusProblemLines = 5

// printProblemSample prints how many problems the kept files have, the first
// few of them, and where to see the rest.
func printProblemSample(e *env, files []engine.FileStatus) {
	var lines []string
	for _, f := range files {
		for _, p := range f.Problems {
			lines = append(lines, p.Error())
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(e.Out, "%s in %s:\n", plural(len(lines), "problem"), plural(countWithProblems(files), "file"))
	for _, l := range lines[:min(len(lines), statusProblemLines)] {
		fmt.Fprintln(e.Out, l)
	}
	if len(lines) > statusProblemLines {
		fmt.Fprintf(e.Out, "... run strata validate for all %d problems\n", len(lines))
	}
}

func countWithProblems(files []engine.FileStatus) int {
	n := 0
	for _, f := range files {
		if len(f.Problems) > 0 {
			n++
		}
	}
	return n
}

// layerList says which layers are there: "L1 present, L2 present, L3
// missing"; a layer whose file is on disk but private (why2, why3: the
// list of files not kept, printed last, says why and how to keep it) is
// "private", not "missing".
func layerList(l layers.Layers, why2, why3 string) string {
	mark := func(name string, ok bool, why string) string {
		switch {
		case ok:
			return name + " present"
		case why != "":
			return name + " private"
		}
		return name + " missing"
	}
	return mark("L1", l.L1, "") + ", " + mark("L2", l.L2, why2) + ", " + mark("L3", l.L3, why3)
}

// plural says "1 file" or "3 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printPendingPushPlan says, in a dry run's plan, what the run does first
// with a push into this repository no command has taken yet (pp, nil when
// none): writes the files it changed, or puts the ref back.
func printPendingPushPlan(e *env, pp *engine.PendingPushInfo) {
	switch {
	case pp == nil:
	case pp.PutBack != "":
		fmt.Fprintf(e.Out, "a push into this repository moved refs/strata/state to %s, not taken here (%s): the run puts it back at %s first\n",
			state.ShortID(pp.To), pp.PutBack, state.ShortID(pp.From))
	case len(pp.Paths) > 0:
		fmt.Fprintf(e.Out, "a push into this repository is not taken yet (%s): the run writes %s first\n",
			state.ShownPaths(pp.Paths, " "), engine.Plural(len(pp.Paths), "it", "them"))
	}
}

// notTakenOf is the end of the push line for the files p adds that the
// next command does not take ("" when none).
func notTakenOf(p *engine.PendingPushInfo) string {
	if len(p.NotTaken) == 0 {
		return ""
	}
	return "; not taken here: " + state.ShownPaths(p.NotTaken, " ") + " (a sync here would refuse them: status shows them as not taken)"
}

// printPendingPush names a move of the state ref from outside strata (a
// push into this repository) that no command has taken yet.
func printPendingPush(e *env, p *engine.PendingPushInfo) {
	switch {
	case p == nil:
	case p.To == "":
		fmt.Fprintf(e.Out, "push: refs/strata/state was deleted from outside strata; the next strata record puts it back at %s, the history the files here follow\n", state.ShortID(p.From))
	case p.PutBack != "":
		fmt.Fprintf(e.Out, "push: refs/strata/state was moved from outside strata to %s, not taken here: %s; the next strata record puts it back at %s, the history the files here follow\n", state.ShortID(p.To), p.PutBack, state.ShortID(p.From))
	case len(p.Paths) > 0:
		fmt.Fprintf(e.Out, "push: refs/strata/state was moved from outside strata (a push into this repository) from %s to %s; not yet written here: %s (the next strata record, sync or restore writes them; until then they show as pushed)%s\n", state.ShortID(p.From), state.ShortID(p.To), state.ShownPaths(p.Paths, " "), notTakenOf(p))
	default:
		fmt.Fprintf(e.Out, "push: refs/strata/state was moved from outside strata (a push into this repository) from %s to %s; nothing of it left to write here (the next strata record marks it taken)%s\n", state.ShortID(p.From), state.ShortID(p.To), notTakenOf(p))
	}
}

// printYoungForeign names the temp files beside kept files that a strata
// process of another pid namespace left less than 10 minutes ago, which no
// record takes yet (engine.YoungForeignLeftovers).
func printYoungForeign(e *env, eng *engine.Engine) {
	young, err := eng.YoungForeignLeftovers()
	if err != nil {
		return
	}
	for _, p := range slices.Sorted(maps.Keys(young)) {
		fmt.Fprintf(e.Out, "temp file: %s beside %s: %s\n", state.ShownPaths(young[p], " "), state.ShownPath(p), engine.YoungForeignWhy())
	}
}
