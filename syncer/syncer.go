// Package syncer is `strata sync` (docs/contract.md §9): it meets this work tree's state
// history with a git remote's. It fetches the remote's refs/strata/state,
// records unrecorded local edits, merges the two histories per path
// (gitstore.PlanMerge finds the three versions and their times; every rule
// of who wins, and the merge of MEMORY.md and the graph, is in package
// conflict), validates what the merge would bring in, writes the merged
// versions into the work tree, names every local version that lost, and
// pushes the result back by compare-and-swap.
package syncer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// Options configures one sync.
type Options struct {
	Remote string // a configured remote, a URL or a path; "" means origin
	Cwd    string // the directory a relative path remote is relative to
	DryRun bool   // fetch and plan only: record, merge, write and push nothing
	Env    []string
	// Lock, when set, is held while the state ref moves and kept files are
	// written (never during network I/O), so a recorder in the same process
	// never reads a file between the two and records the old version again.
	Lock sync.Locker
	// AfterRecord, when set, runs for the local edits the sync recorded
	// before its merge (outside Lock): the write protocol (layers), whose
	// L2 line and L3 upsert of a workflow step are then recorded, merged
	// and pushed with it. Recorded by the sync, the edit is no longer one
	// for a watcher or a record to find, so the protocol's only turn is
	// here. The paths of what it recorded join Report.Recorded.
	AfterRecord func(outs []engine.Outcome) ([]engine.Outcome, error)
}

// Report is what a sync did.
type Report struct {
	Remote     string           `json:"remote"`
	Tracking   string           `json:"tracking_ref"`
	Result     engine.MergeKind `json:"result"`
	LocalHead  string           `json:"local_before,omitempty"`
	RemoteHead string           `json:"remote_before,omitempty"`
	Head       string           `json:"head,omitempty"`
	Recorded   []string         `json:"recorded"` // local edits recorded before merging, then the write protocol's records for them (Options.AfterRecord)
	// RecordedDeleted lists those of Recorded (WouldRecord in a dry run)
	// that record a deletion: the run deletes them on every machine that
	// takes the push, which "recorded PATH" did not say (attack40 F5).
	RecordedDeleted []string `json:"recorded_deleted,omitempty"`
	Written         []string `json:"written"` // kept files written or removed in the work tree
	Deleted         []string `json:"deleted"` // those of Written that were removed (the merge deleted them)
	Skipped         []string `json:"skipped"` // kept files not written: edited on disk meanwhile
	// LeftAfterRestore lists the files an interrupted restore owed that
	// this sync, completing its journal, left as edited (recorded next).
	LeftAfterRestore []string `json:"left_after_restore,omitempty"`
	// MergedAgain lists the MEMORY.md and graph files whose edit on disk
	// kept the merged version from being written, merged again with it
	// (engine.MergeOverEdits): the edit and the other side's work are both
	// kept, recorded after the edit itself.
	MergedAgain []string `json:"merged_again"`
	// DroppedAgain names, by path of MergedAgain, what of a graph's edits
	// that merge could not keep (a relation to an entity one side deleted).
	DroppedAgain map[string][]string `json:"dropped_again,omitempty"`
	// MergeLater lists those whose edit was invalid: the record that finds
	// the file fixed merges it again with the merged version.
	MergeLater []string `json:"merge_later"`
	// Unended lists those of MergeLater that were not invalid but had a
	// line still being appended: merged once it ends, or after a moment
	// (engine.UnendedWait), by the next record.
	Unended []string `json:"unended,omitempty"`
	// Held lists the MEMORY.md and graph files left unrecorded because a
	// line was still being appended to them (engine.LineInProgress): not
	// published half-written; the next record or sync takes them.
	Held      []string           `json:"held,omitempty"`
	Decisions []engine.MergePath `json:"decisions"` // paths both sides changed, or kept local
	Lost      []engine.Lost      `json:"lost"`      // local versions the merge did not take
	Problems  state.Problems     `json:"problems,omitempty"`
	// NotTaken lists the versions this sync's merge took into the shared
	// state without writing them here, and why: private here, or refused
	// when written (a symbolic link or a folder in the way). Each is noted
	// (engine.KeepNotTaken), so the missing file is no deletion.
	NotTaken []NotTaken `json:"not_taken"`
	// Dropped lists the paths a home sync left out of the home history
	// (from the remote's, and from the local ref's when a strata before
	// this one took them): it holds the auto-memory file only. Never
	// written to disk; the merge's delete blocks name them.
	Dropped []string `json:"dropped,omitempty"`
	Pushed  bool     `json:"pushed"`
	Retried bool     `json:"retried"`
	// Races counts the pushes refused because the remote moved since its
	// fetch (Retried: at least one), each followed by another round.
	Races  int  `json:"races,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
	// WouldPush, in a dry run's plan, says the run would push: this side
	// holds commits the remote's head does not (attack37 L7: the plan said
	// "up-to-date" where the run pushed).
	WouldPush bool `json:"would_push,omitempty"`
	// WouldRecord, in a dry run's plan, lists the kept files whose version
	// on disk is not recorded: the run records them first, and pushes them
	// (attack37d L6: the plan said "up-to-date" where the run recorded and
	// pushed).
	WouldRecord []string `json:"would_record,omitempty"`
	// PendingPush, in a dry run's plan, is a push into this repository no
	// command has taken yet: the run takes it first (writing its files,
	// which are then no edits to record) or puts it back, and the plan is
	// made as the run will find the ref.
	PendingPush *engine.PendingPushInfo `json:"pending_push,omitempty"`
	// Home is the sync of the home ref (sync --home), with Shown mapping its
	// tree name to the auto-memory file's "~/..." path.
	Home  *Report           `json:"home,omitempty"`
	Shown map[string]string `json:"shown,omitempty"`

	// mergeOver is the writes this sync (or a killed one's journal) left
	// undone, to merge again with the edit on disk once the write phase is
	// over (mergeAgain).
	mergeOver []engine.NotWritten
	// recovered is the losses of an earlier sync, killed after its merge,
	// whose journal this sync completed: named with this sync's.
	recovered []engine.Lost
	// invalid holds the kept files whose unrecorded edit this sync could
	// not record (invalid on disk): a merge may not change them.
	invalid map[string]bool
}

// NotTaken is a version a sync took into the shared state but did not write
// in this work tree: Why is "private here: REASON" for a path this machine
// does not keep, "not written here: PROBLEM" for one its write refused.
type NotTaken struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Why not-taken versions are not here, as the report's NotTaken says.
const (
	WhyPrivate    = "private here: "
	WhyNotWritten = "not written here: "
)

// problem adds problems to the report, each once: a kept file that is a
// symbolic link is refused by the scan for unrecorded edits and again when
// the merge would write it, in the same words.
func (rep *Report) problem(ps ...state.Problem) {
	for _, p := range ps {
		if !slices.Contains(rep.Problems, p) {
			rep.Problems = append(rep.Problems, p)
		}
	}
}

// notTaken adds a version not taken here to the report, once per path (a
// retry's merge says it again).
func (rep *Report) notTaken(path, why string) {
	rep.NotTaken = slices.DeleteFunc(rep.NotTaken, func(n NotTaken) bool { return n.Path == path })
	rep.NotTaken = append(rep.NotTaken, NotTaken{Path: path, Why: why})
}

// wrote adds a file the merge wrote (or, dry, would write) to Written, and
// to Deleted when the merge removed it.
func (rep *Report) wrote(p engine.MergePath) {
	rep.Written = append(rep.Written, p.Path)
	if p.Result == "" {
		rep.Deleted = append(rep.Deleted, p.Path)
	}
}

// ErrNoOrigin is a sync without REMOTE in a repository that has no remote
// named origin.
var ErrNoOrigin = errors.New("no remote named origin; name one: strata sync REMOTE")

// afterScan, set by tests, runs once the scan for unrecorded edits is done
// and the fetch may still run, so an edit can land just after the scan.
var afterScan func()

// pushRounds bounds the fetch, merge and push rounds of one sync while the
// remote keeps moving between its fetch and its push. Two (one race
// retried) were too few where the remote is a work tree whose watcher
// records an agent's saves every few hundred milliseconds: a sync there
// failed most of the time (session-41 chaos runs: 4 to 16 of 30 syncs
// through, five syncs tried each). Each round fetches only what moved.
const pushRounds = 4

// beforePush, set by tests, runs between the merge and the push (attempt
// -1: right before pushFirst's push), so a race with another sync can be
// staged deterministically.
var beforePush func(attempt int)

// Sync runs one sync of eng's work tree with a remote. Nothing is changed
// locally before the remote has been reached, so an unreachable remote
// returns a *engine.RemoteError and leaves everything as it was. A state
// ref that only adds to what the remote held at the last sync is pushed
// first, with no fetch (pushFirst); otherwise, or when the remote has moved
// since, the remote is fetched, merged and pushed. When the remote moved
// between that fetch and the push, the fetch and merge run again, up to
// pushRounds in all; a race in the last returns an error wrapping
// engine.ErrRemoteMoved (the local merge is kept, the next sync pushes it).
func Sync(ctx context.Context, eng *engine.Engine, o Options) (*Report, error) {
	defaulted := o.Remote == ""
	if defaulted {
		o.Remote = "origin"
	}
	if o.Lock == nil {
		o.Lock = &sync.Mutex{}
	}
	remote, err := eng.ResolveRemote(ctx, o.Remote, o.Cwd)
	if err != nil {
		return nil, err
	}
	if defaulted && remote.Arg != remote.Name {
		return nil, ErrNoOrigin // origin is not configured (it resolved to a path)
	}
	remote.Env = o.Env
	remote.WouldKeep = wouldKeep(eng, o.Lock)
	release, err := eng.HoldSync() // one sync of a work tree at a time
	if err != nil {
		return nil, err
	}
	defer release()
	rep := &Report{Remote: remote.Name, Tracking: remote.Ref, DryRun: o.DryRun,
		Recorded: []string{}, Written: []string{}, Deleted: []string{}, Skipped: []string{}, MergedAgain: []string{}, MergeLater: []string{}, Decisions: []engine.MergePath{}, Lost: []engine.Lost{}, NotTaken: []NotTaken{}}
	defer func() {
		if len(rep.recovered) > 0 {
			rep.Lost = append(rep.Lost, rep.recovered...)
			sort.SliceStable(rep.Lost, func(i, j int) bool { return rep.Lost[i].Path < rep.Lost[j].Path })
		}
	}()
	var scanned *scan // made while pushFirst pushed
	if o.DryRun {
		pp, err := eng.PendingPush()
		if err != nil {
			return rep, err
		}
		rep.PendingPush = pp
	} else {
		// A sync killed after its merge is completed first, as by record,
		// so that the files it owed are not taken for local edits and the
		// versions it did not take are named here.
		if err := recoverWrites(eng, o.Lock, rep); err != nil {
			return rep, err
		}
		done, sc, err := pushFirst(ctx, eng, o, remote, rep)
		if done || err != nil {
			return rep, err
		}
		scanned = sc
	}
	for attempt := 0; ; attempt++ {
		var unrecorded <-chan scan
		switch {
		case attempt > 0 || o.DryRun:
		case scanned != nil:
			unrecorded = ready(*scanned)
		default:
			unrecorded = scanUnrecorded(eng, o.Lock) // while git fetches
		}
		fetched, err := eng.Fetch(ctx, remote)
		if unrecorded != nil {
			sc := <-unrecorded // the engine is the caller's again only after this
			if err == nil {
				err = recordLocal(eng, o, sc, rep)
			}
		}
		if err != nil {
			return rep, err
		}
		if attempt == 0 && !rep.Pushed { // (pushFirst's push names the heads before it)
			rep.RemoteHead = fetched
			if rep.LocalHead, err = localHead(eng, rep); err != nil {
				return rep, err
			}
		}
		head, err := merge(eng, o, remote, fetched, rep)
		if err == nil && o.DryRun {
			err = planPush(ctx, eng, remote, fetched, rep)
		}
		if err != nil || o.DryRun {
			return rep, err
		}
		if len(rep.mergeOver) > 0 { // the write phase is over: merge the edits that kept a merged version out
			o.Lock.Lock()
			mergeAgain(eng, rep)
			head, err = eng.Head()
			o.Lock.Unlock()
			if err != nil {
				return rep, err
			}
		}
		if head == "" || head == fetched {
			return rep, nil // the remote has it all
		}
		if ps, err := eng.Unpublishable(ctx, head, fetched, remote.Ref); err != nil || len(ps) > 0 {
			if err != nil {
				return rep, err
			}
			// a private file never leaves the machine (issue 9.1); a
			// refusal whose note could not be written says so beside it
			return rep, append(ps, eng.TakeUnwrittenNotes()...)
		}
		if beforePush != nil {
			beforePush(attempt)
		}
		err = eng.Push(ctx, remote, head, fetched)
		if err == nil {
			rep.Pushed = true
			return rep, nil
		}
		if errors.Is(err, engine.ErrRemoteMoved) && attempt >= pushRounds-1 {
			// the merges made here stand on the local ref: the next sync
			// merges and pushes them (attack37b: said as the bare error)
			return rep, fmt.Errorf("%w again while this sync merged it %d more times; what it merged here stands on %s, nothing is lost: run strata sync again", err, pushRounds-1, eng.StateRef())
		}
		if !errors.Is(err, engine.ErrRemoteMoved) {
			return rep, err
		}
		rep.Retried = true
		rep.Races++
	}
}

// planPush is a dry run's plan of the push that follows the merge it
// planned (rep): whether the run would push (rep.WouldPush), and, when it
// would, the refusal the run would make of a private version among what
// it pushes, checked as the run checks it (Unpublishable).
func planPush(ctx context.Context, eng *engine.Engine, remote engine.Remote, fetched string, rep *Report) error {
	unrec, err := eng.UnrecordedPlan()
	pp := rep.PendingPush
	if pp != nil && pp.PutBack != "" {
		unrec, err = eng.UnrecordedPlanAt(pp.From)
	}
	if err != nil {
		return err
	}
	for _, k := range unrec {
		if pp != nil && pp.PutBack == "" && (slices.Contains(pp.Paths, k.Path) || slices.Contains(pp.NotTaken, k.Path)) {
			continue // written by the run first, from the push, or not taken from it: no edit
		}
		if !engine.OutsideTree(k.Path) {
			rep.WouldRecord = append(rep.WouldRecord, k.Path)
			if _, err := os.Lstat(eng.Config().Abs(k.Path)); errors.Is(err, fs.ErrNotExist) {
				rep.RecordedDeleted = append(rep.RecordedDeleted, k.Path)
			}
		}
	}
	local := rep.LocalHead
	switch {
	case local == "" || local == fetched:
		rep.WouldPush = len(rep.WouldRecord) > 0
		return nil
	case rep.Result == engine.MergeFastForward:
		rep.WouldPush = len(rep.WouldRecord) > 0 // recorded over the remote's head, then pushed
		return nil
	}
	ps, err := eng.UnpublishablePlan(ctx, local, fetched, remote.Ref)
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		return ps
	}
	rep.WouldPush = true
	return nil
}

// pushFirst pushes the local state ref to the remote without fetching
// first, when it only adds to what the remote held at the last sync (the
// tracking ref is one of its ancestors) and publishes nothing private: the
// push's lease on the tracking ref's commit then holds exactly when the
// remote has not moved since, and such a sync, the usual one of a machine
// that only publishes, runs one git process instead of two. The scan for
// unrecorded edits runs while git pushes. It returns done when the push
// succeeded and no edit waits to be recorded. Otherwise the caller goes on
// with the fetching sync, given the scan when one was made: when the
// remote moved (the push changed nothing there), when edits were found
// (recorded and pushed by that sync), and when this way was not taken (a
// problem found here is found and reported there again). Nothing local
// changes unless the push succeeded, and then only the tracking ref.
func pushFirst(ctx context.Context, eng *engine.Engine, o Options, remote engine.Remote, rep *Report) (done bool, sc *scan, err error) {
	tracking, err := eng.RefHead(remote.Ref)
	if err != nil || tracking == "" {
		return false, nil, nil // never fetched from this remote
	}
	local, err := eng.Head()
	if err != nil || local == "" || local == tracking {
		return false, nil, nil
	}
	m, err := eng.PlanMerge(local, tracking)
	if err != nil || m.Kind != engine.MergeUpToDate {
		return false, nil, nil // the remote's last head is not one of ours: merge first
	}
	if ps, err := eng.Unpublishable(ctx, local, tracking, remote.Ref); err != nil || len(ps) > 0 {
		return false, nil, nil
	}
	unrecorded := scanUnrecorded(eng, o.Lock) // while git pushes
	if beforePush != nil {
		beforePush(-1)
	}
	err = eng.Push(ctx, remote, local, tracking)
	found := <-unrecorded
	switch {
	case errors.Is(err, engine.ErrRemoteMoved):
		return false, &found, nil
	case err != nil:
		return false, nil, err
	}
	rep.LocalHead, rep.RemoteHead, rep.Pushed = local, tracking, true
	report(rep, m)
	if found.err == nil && len(found.paths) == 0 {
		return true, nil, nil
	}
	return false, &found, nil
}

// recoverWrites completes the journal of a sync killed after its merge
// (engine.Engine.RecoverWrites) and keeps its losses for the report.
func recoverWrites(eng *engine.Engine, lock sync.Locker, rep *Report) error {
	lock.Lock()
	defer lock.Unlock()
	// a push into this repository (it is another machine's remote) is
	// taken, or put back, before anything reads the ref's head: pushFirst
	// published a head this machine refuses, and the fetch after it took
	// that head back from the remote (attack40c H2)
	if err := eng.TakePush(); err != nil {
		return err
	}
	release, err := holdAndRecover(eng, rep)
	if release != nil {
		release()
	}
	if err == nil {
		mergeAgain(eng, rep)
	}
	return err
}

// mergeAgain merges the edits that kept merged versions from being
// written with those versions (engine.MergeOverEdits), once no write phase
// is held: the file then holds both, and is no longer only "not written".
func mergeAgain(eng *engine.Engine, rep *Report) {
	if len(rep.mergeOver) == 0 {
		return
	}
	for _, n := range eng.MergeOverEdits(rep.mergeOver) {
		switch {
		case n.Merged != "":
			rep.Skipped = slices.DeleteFunc(rep.Skipped, func(q string) bool { return q == n.Path })
			if !slices.Contains(rep.MergedAgain, n.Path) {
				rep.MergedAgain = append(rep.MergedAgain, n.Path)
			}
			if len(n.Dropped) > 0 {
				if rep.DroppedAgain == nil {
					rep.DroppedAgain = map[string][]string{}
				}
				rep.DroppedAgain[n.Path] = n.Dropped
			}
		case n.Later:
			rep.Skipped = slices.DeleteFunc(rep.Skipped, func(q string) bool { return q == n.Path })
			if !slices.Contains(rep.MergeLater, n.Path) {
				rep.MergeLater = append(rep.MergeLater, n.Path)
			}
			if n.Unended && !slices.Contains(rep.Unended, n.Path) {
				rep.Unended = append(rep.Unended, n.Path)
			}
		}
	}
	rep.mergeOver = nil
	sort.Strings(rep.MergedAgain)
	sort.Strings(rep.MergeLater)
	sort.Strings(rep.Unended)
}

// holdAndRecover takes the write-phase lock (engine.HoldWrites: no record
// in another process until release) and completes a journal a killed sync
// left, keeping its losses for the report and adding the writes it left
// undone (the file edited after that sync was interrupted) to the files
// not written. release is nil when the lock was not taken.
func holdAndRecover(eng *engine.Engine, rep *Report) (release func(), err error) {
	if release, err = eng.HoldWrites(); err != nil {
		return nil, err
	}
	nw, lost, err := eng.RecoverWrites()
	rep.recovered = append(rep.recovered, lost...)
	for _, n := range nw {
		if n.Found != "" { // an edit found in the killed sync's temp file: recorded now
			if !slices.Contains(rep.Recorded, n.Path) {
				rep.Recorded = append(rep.Recorded, n.Path)
			}
			continue
		}
		if n.NotTaken { // refused, and noted: no edit to merge again
			rep.notTaken(n.Path, WhyNotWritten+"refused after an interrupted sync")
			continue
		}
		if n.Restore && !slices.Contains(rep.LeftAfterRestore, n.Path) {
			// not this sync's write: an interrupted restore's (attack38d L1.2)
			rep.LeftAfterRestore = append(rep.LeftAfterRestore, n.Path)
		} else if !n.Restore && !slices.Contains(rep.Skipped, n.Path) {
			rep.Skipped = append(rep.Skipped, n.Path)
		}
		rep.mergeOver = append(rep.mergeOver, n)
	}
	return release, err
}

// ready returns a channel that holds sc.
func ready(sc scan) <-chan scan {
	out := make(chan scan, 1)
	out <- sc
	return out
}

// scan is what scanUnrecorded found.
type scan struct {
	paths []config.Kept
	err   error
}

// scanUnrecorded lists, in the background, the kept files whose version on
// disk is not recorded (engine.Unrecorded), holding lock as any use of the
// engine beside a recorder in the same process does. It reads and records
// nothing else, so it runs while git fetches (a separate process, a
// separate ref): a sync waits for one or the other, not both in turn.
func scanUnrecorded(eng *engine.Engine, lock sync.Locker) <-chan scan {
	out := make(chan scan, 1)
	go func() {
		lock.Lock()
		paths, err := eng.Unrecorded()
		lock.Unlock()
		if afterScan != nil {
			afterScan()
		}
		out <- scan{paths, err}
	}()
	return out
}

// recordLocal records the unrecorded edits scanUnrecorded found,
// so the merge never overwrites one, then runs o.AfterRecord for them
// (outside o.Lock). Invalid files are quarantined as always and reported.
// Nothing is recorded before the fetch succeeded.
func recordLocal(eng *engine.Engine, o Options, sc scan, rep *Report) error {
	if sc.err != nil || len(sc.paths) == 0 {
		return sc.err
	}
	o.Lock.Lock()
	paths := slices.DeleteFunc(slices.Clone(sc.paths), func(k config.Kept) bool {
		if eng.LineInProgress(k) {
			rep.Held = append(rep.Held, k.Path) // left as edited: a merge over it waits for the line
			return true
		}
		return false
	})
	var outs []engine.Outcome
	var err error
	if len(paths) > 0 {
		outs, err = eng.Record(paths, state.SourceRecord)
	}
	o.Lock.Unlock()
	recorded := false
	for _, o := range outs {
		if o.Entry != nil {
			rep.Recorded = append(rep.Recorded, o.Path)
			if o.Entry.Action == state.ActionDelete {
				rep.RecordedDeleted = append(rep.RecordedDeleted, o.Path)
			}
			recorded = true
		}
		if o.Invalid() {
			rep.problem(o.Problems...)
			if o.Unread() {
				continue // not a readable file (a symlink, a FIFO): never recorded, never written over
			}
			if rep.invalid == nil {
				rep.invalid = map[string]bool{}
			}
			rep.invalid[o.Path] = true
		}
	}
	if err != nil || !recorded || o.AfterRecord == nil {
		return err
	}
	more, err := o.AfterRecord(outs)
	for _, m := range more {
		if m.Entry != nil {
			rep.Recorded = append(rep.Recorded, m.Path)
		}
	}
	return err
}

// localHead is the state ref's head, or, in a dry run whose run would
// first put a push into this repository back, the head it puts it back at.
func localHead(eng *engine.Engine, rep *Report) (string, error) {
	if pp := rep.PendingPush; pp != nil && pp.PutBack != "" {
		return pp.From, nil
	}
	return eng.Head()
}

// merge takes the fetched head into the state ref (or, dry, only plans it),
// writes the kept files whose version changed, and returns the head to push:
// "" when there is nothing to push.
func merge(eng *engine.Engine, o Options, remote engine.Remote, fetched string, rep *Report) (string, error) {
	local, err := eng.Head()
	if o.DryRun {
		local, err = localHead(eng, rep)
	}
	if err != nil {
		return "", err
	}
	if fetched == "" {
		rep.Result, rep.Head = engine.MergeUpToDate, local
		return local, nil // a remote without state: push ours
	}
	check := func(m *engine.Merge) error {
		if ps := blockedByInvalid(m, rep); len(ps) > 0 {
			return ps
		}
		return checkMerge(eng, m)
	}
	if o.DryRun {
		m, err := eng.PlanMerge(local, fetched)
		if err != nil {
			if r, ok := refusedHistory(remote.Name, err); ok {
				return "", r
			}
			return "", err
		}
		if err := check(m); err != nil {
			return "", err
		}
		report(rep, m)
		nt := eng.NotTaken()
		for _, p := range m.Paths {
			if _, kept := eng.Config().Classify(p.Path); kept && written(p, nt) {
				rep.wrote(p)
			}
		}
		return "", nil
	}
	o.Lock.Lock()
	defer o.Lock.Unlock()
	// no record in another process from here until the owed writes are
	// done (engine.HoldWrites): it would take this sync's journal for a
	// dead one's; a push into this repository (it is another machine's
	// remote) is taken first: the merge's ref move would refuse to start
	// from it
	if err := eng.TakePush(); err != nil {
		return "", err
	}
	release, err := holdAndRecover(eng, rep)
	if release != nil {
		defer release()
	}
	if err != nil {
		return "", err
	}
	// The writes the merge owes the work tree go to the journal before the
	// ref moves, so a crash in between is completed by the next command
	// instead of recorded as local edits that revert the remote's work; so
	// do the local versions it does not take, so that a crash before they
	// are kept still leaves them named.
	journaled := func(m *engine.Merge) error {
		if err := check(m); err != nil {
			return err
		}
		var owed []engine.JournalEntry
		nt := eng.NotTaken()
		held := map[string]string{}
		for _, p := range m.Paths {
			_, kept := eng.Config().Classify(p.Path)
			if !kept && p.Changed() && p.Result != "" {
				if why := eng.Config().Private(p.Path); why != "" {
					// said, so the user knows why the file is not here
					// (attack33b F6: a folder linked to an ignored one
					// left every received file out, with no word)
					rep.notTaken(p.Path, WhyPrivate+why)
				}
			}
			if p.NotTaken || !kept && p.Changed() && p.Result != "" {
				// a version this work tree does not take: refused here, or
				// at a path this machine does not keep (private here, no
				// rule). Noted, the file's absence is not a deletion to
				// record once the path is kept (strata.keepPrivate added,
				// the file committed, a rule added): the next record
				// pushed the deletion and every machine deleted the file
				// (attack28-recheck N3)
				held[p.Path] = p.Result
			}
			if kept && written(p, nt) {
				owed = append(owed, engine.JournalEntry{Path: p.Path, Ours: onDisk(p, nt), Result: p.Result})
			}
		}
		// noted before the ref moves: a note the ref does not match is void
		if err := eng.KeepNotTaken(held); err != nil {
			return err
		}
		if err := eng.BeginWrites(m.Ours, owed, losses(m)); err != nil {
			return err
		}
		crashPoint("journaled")
		return nil
	}
	title := "sync with " + remote.Name
	m, err := eng.MergeState(fetched, title, journaled)
	if err != nil {
		_ = eng.EndWrites() // the ref did not move: nothing is owed
		if r, ok := refusedHistory(remote.Name, err); ok {
			return "", r
		}
		return "", fmt.Errorf("merge: %w", err)
	}
	crashPoint("ref-moved")
	report(rep, m)
	if err := writeTree(eng, m, rep); err != nil {
		return "", err
	}
	crashPoint("written")
	// The losses are kept before the journal that also holds them goes,
	// and so are the merges owed over files edited while they were written
	// (made once the write phase is over, mergeAgain).
	if err := eng.KeepLosses(rep.Lost); err != nil {
		return "", err
	}
	eng.OweMerges(rep.mergeOver)
	if err := eng.EndWrites(); err != nil {
		return "", err
	}
	return m.Head, nil
}

// blockedByInvalid refuses a merge that would change a kept file whose edit
// on disk this sync could not record because it is invalid (a MEMORY.md a
// git merge left with conflict markers, a graph with a broken line): the
// merged version could not be written over the edit, and once the file is
// fixed its next record would replace the merged version — the other
// machine's lines gone on both machines, and nobody told. Nothing is merged;
// fixed and synced again, the edit is recorded and merged as any other.
func blockedByInvalid(m *engine.Merge, rep *Report) state.Problems {
	var ps state.Problems
	for _, p := range m.Paths {
		if !rep.invalid[p.Path] || !p.Changed() {
			continue
		}
		why := ""
		for _, q := range rep.Problems {
			if q.Path == p.Path && !q.Warning {
				why = " (" + q.Error() + ")"
				break
			}
		}
		ps = append(ps, state.Problem{Path: p.Path, Message: "invalid on disk" + why + ", and the remote changed it: sync would neither merge nor write it; fix it (strata validate " + state.ShellWord(p.Path) + "), then sync again; nothing was merged"})
	}
	return ps
}

// CrashPoint, set by tests only, is called at the named steps of a sync so
// a test can kill or pause the process there ("journaled": the journal
// written, the state ref not yet moved; "ref-moved": the state ref holds the
// merge, no file written yet; "half-written": half of the files written;
// "written": every file written, the losses not yet kept).
var CrashPoint func(step string)

func crashPoint(step string) {
	if CrashPoint != nil {
		CrashPoint(step)
	}
}

func report(rep *Report, m *engine.Merge) {
	rep.Result, rep.Head = m.Kind, m.Head
	rep.Dropped = union(rep.Dropped, m.Foreign)
	rep.Decisions = rep.Decisions[:0]
	for _, p := range m.Paths {
		if p.ByTime || p.KeptLocal != "" {
			rep.Decisions = append(rep.Decisions, p)
		}
	}
	// A retry's merge builds on the first one's (the state ref holds it):
	// what that one did not take stays lost, and named.
	now := losses(m)
	for _, l := range rep.Lost {
		if !slices.ContainsFunc(now, func(n engine.Lost) bool { return n.Path == l.Path && n.Rev == l.Rev }) {
			now = append(now, l)
		}
	}
	sort.SliceStable(now, func(i, j int) bool { return now[i].Path < now[j].Path })
	rep.Lost = now
}

// losses lists the local versions m does not take: those that lost in
// merges made elsewhere that m brings in, and those that lose in m itself.
// A version lost elsewhere — decided by time there, or refused there — is
// lost here only if m replaces this side's version at its path: a path m
// leaves as it is (a check here kept the local version, "kept local", or
// both sides already hold the same version) lost nothing here, and naming
// it would send the user to restore the version the file still holds.
func losses(m *engine.Merge) []engine.Lost {
	replaced := map[string]bool{}
	for _, p := range m.Paths {
		replaced[p.Path] = p.Changed() && !p.NotTaken
	}
	var out []engine.Lost
	for _, l := range m.Lost {
		if replaced[l.Path] {
			out = append(out, l)
		}
	}
	for _, p := range m.Paths {
		switch {
		case lostLocal(p):
			out = append(out, engine.Lost{Path: p.Path, Rev: p.Loser, Winner: p.Winner, CheckedOut: p.TheirsHead != ""})
		case p.ReplacesEdit && m.Ours != "":
			// a branch switch over there is no edit here: the version it
			// replaces is named, with the local head that holds it
			winner := m.Head
			if winner == "" {
				winner = m.Theirs
			}
			out = append(out, engine.Lost{Path: p.Path, Rev: m.Ours, Winner: winner, CheckedOut: true})
		}
		if p.MergedBoth && p.DroppedOurs && p.OursAt.Commit != "" {
			// the merge kept most of the local version but not all: it
			// stays named, with its restore, until the path is recorded again
			winner := m.Head
			if winner == "" { // named for the journal, before the merge commit is written
				winner = m.Theirs
			}
			out = append(out, engine.Lost{Path: p.Path, Rev: p.OursAt.Commit, Winner: winner})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	// one line a lost version: a merge elsewhere may name what this merge
	// replaces too (attack33c C4), and the first reason found stands
	type key struct{ path, rev string }
	seen := map[key]bool{}
	return slices.DeleteFunc(out, func(l engine.Lost) bool {
		k := key{l.Path, l.Rev}
		dup := seen[k]
		seen[k] = true
		return dup
	})
}

// lostLocal reports whether a path's local version lost in this merge:
// both sides changed it, the remote's whole version was taken, and the
// local one was a version (not a deletion).
func lostLocal(p engine.MergePath) bool {
	return p.ByTime && p.Ours != "" && p.Result == p.Theirs && p.Loser != "" &&
		!p.MergedBoth && p.KeptBoth == "" && p.KeptLocal == ""
}

// checkMerge resolves the paths both sides changed by class (see resolve),
// then validates every version the merge would bring in. A version
// that fails its schema, or one decided by timestamp that breaks a history
// rule against the local version (the initiative status machine, the
// append-only Phase Outcomes), is not taken: the local version stays. A
// version changed on the remote side only was checked against its own
// history there, step by step, so only its schema is checked here (and the
// append-only rule). Paths this work tree does not keep are merged as they
// are and never written.
func checkMerge(eng *engine.Engine, m *engine.Merge) error {
	want := make(map[string]string, len(m.Paths)) // what the plan takes, before any check
	for _, p := range m.Paths {
		want[p.Path] = p.Result
	}
	if err := resolve(eng, m); err != nil {
		return err
	}
	defer keepNotTaken(eng, m, want)
	keep := int64(keptContent) // what may stay in memory for writeTree
	for i := range m.Paths {
		p := &m.Paths[i]
		k, ok := eng.Config().Classify(p.Path)
		if !ok {
			continue
		}
		p.Class, p.Schema = k.Class, k.Schema
		if !p.Changed() {
			continue
		}
		f := engine.File{Kept: k}
		if p.Merged != nil {
			f.Content, f.Exists = p.Merged, true
			p.Content = p.Merged // already in memory: no bound to count it against
		} else if p.Result != "" {
			data, err := eng.Blob(p.Result)
			if tooLarge(p, err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
			}
			f.Content, f.Exists = data, true
			if keep -= int64(len(data)); keep >= 0 {
				p.Content = data
			}
		}
		var prev []byte
		// a version kept beside the other, not over it
		moved := p.Ours == "" || p.KeptBoth != "" && keptAt(m, p.KeptBoth, p.Ours)
		if !moved && p.Ours != "" && (p.ByTime || k.Class.Immutable()) {
			data, err := eng.Blob(p.Ours)
			if tooLarge(p, err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
			}
			prev = data
		}
		check := eng.Check
		if p.MovedFrom != "" {
			check = func(f engine.File, _ []byte) state.Problems { return eng.CheckSchema(f) }
		}
		if ps := check(f, prev); ps.Invalid() {
			p.KeptLocal = "merged version invalid: " + reasons(ps, p.Path)
			if !f.Exists && prev != nil && k.Class.Immutable() {
				// not "run strata restore to put it back": it is here
				// (attack38d M1: a restore --all there removed it)
				p.KeptLocal = "deleted on the other machine (by its restore --all, or rm), and a recorded Phase Outcome or resolution is append-only on every machine: it stays here, and this sync gives it back to the others"
			}
			p.Result, p.Content = p.Ours, nil
			continue
		}
		if _, err := keepWhatRuns(eng, p, f.Content, m.Theirs); err != nil {
			return fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
		}
	}
	keepBothOrNeither(m)
	for i := range m.Paths {
		if err := replacesEdit(eng, &m.Paths[i]); err != nil {
			return err
		}
	}
	return nil
}

// keepNotTaken keeps in the merged tree the other side's version of each
// path this machine refused by its own rules (kept local) while its work
// tree holds no version there: none on disk, the path absent here or a
// version an earlier sync kept in the ref without taking it
// (engine.NotTaken). Kept local as a deletion, the refusal would delete
// the file for every machine that takes the merge, whose own rules take the
// version (attack25 recheck N3: a machine with a 10 MB max_size deleted
// another's 15 MB file); kept in the tree, it stays the shared state, and
// this work tree is not written (NotTaken; the next record reads the
// missing file as not taken, not as deleted).
func keepNotTaken(eng *engine.Engine, m *engine.Merge, want map[string]string) {
	nt := eng.NotTaken()
	for i := range m.Paths {
		p := &m.Paths[i]
		none := p.Ours == "" || nt[p.Path] == p.Ours
		if p.KeptLocal == "" || !none || p.Theirs == "" || want[p.Path] != p.Theirs || p.Result != p.Ours || p.KeptBoth != "" || p.MovedFrom != "" {
			continue
		}
		if _, kept := eng.Config().Classify(p.Path); !kept {
			continue
		}
		p.Result, p.Content, p.Merged, p.NotTaken = p.Theirs, nil, nil, true
		// one story: the version stays in the shared state, not only on the tracking ref
		p.KeptLocal = strings.TrimSuffix(p.KeptLocal, onTrackingRef) + "; not written here, and kept in the shared state for the machines that take it"
	}
}

// onDisk is the version of p's path this work tree's file holds as the
// merge starts: p.Ours, or none when that is a version a sync kept in the
// ref without writing it here (nt, engine.NotTaken).
func onDisk(p engine.MergePath, nt map[string]string) string {
	if p.Ours != "" && nt[p.Path] == p.Ours {
		return ""
	}
	return p.Ours
}

// written reports whether the merge changes p's file in this work tree: its
// version changes, it is not one this machine refused but keeps in the
// tree (NotTaken), and it is not what the file already holds.
func written(p engine.MergePath, nt map[string]string) bool {
	return p.Changed() && !p.NotTaken && p.Result != onDisk(p, nt)
}

// replacesEdit sets p.ReplacesEdit when the merge takes a version the
// other machine's checked-out commit held (a checkout, a stash, a pull
// there: no step of the workflow) over a local version this machine's
// checked-out commit does not hold, and some line of the local version is
// not in what it takes (whole, or merged with it: a line the checkout
// removed there). The merge goes on as the contract says; the local
// version is named as lost, with the restore that brings it back, instead
// of going without a word.
func replacesEdit(eng *engine.Engine, p *engine.MergePath) error {
	if p.TheirsHead == "" || p.Ours == "" || p.Result == p.Ours || p.NotTaken {
		return nil
	}
	if _, kept := eng.Config().Classify(p.Path); !kept || eng.CheckedOutBlob(p.Ours, p.Path) {
		return nil // never written here, or what git checked out here
	}
	if p.Result == "" {
		p.ReplacesEdit = true // a checkout there removed the file
		return nil
	}
	if p.Merged == nil && p.Result != p.Theirs {
		return nil // another version than theirs: decided by the merge rules
	}
	var tl *engine.TooLargeError
	ours, err := eng.Blob(p.Ours)
	if errors.As(err, &tl) {
		return nil // over max_size here: the merge kept it out already
	}
	if err != nil {
		return fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
	}
	taken := p.Merged
	if taken == nil {
		if taken = p.Content; taken == nil {
			if taken, err = eng.Blob(p.Result); errors.As(err, &tl) {
				return nil
			} else if err != nil {
				return fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
			}
		}
	}
	p.ReplacesEdit = linesDropped(ours, taken)
	return nil
}

// linesDropped reports whether some line of ours is not in taken, counting
// repeated lines: a line ours holds twice is dropped when taken holds it
// once. Line ends are compared without their CR.
func linesDropped(ours, taken []byte) bool {
	have := map[string]int{}
	for _, l := range strings.Split(string(taken), "\n") {
		have[strings.TrimSuffix(l, "\r")]++
	}
	for _, l := range strings.Split(string(ours), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if have[l] == 0 {
			return true
		}
		have[l]--
	}
	return false
}

// keptContent bounds the versions checkMerge keeps in memory for writeTree
// (the rest are read again there).
const keptContent = 64 << 20

// keptAt reports whether the merge leaves version blob at path.
func keptAt(m *engine.Merge, path, blob string) bool {
	for _, q := range m.Paths {
		if q.Path == path {
			return q.Result == blob
		}
	}
	return false
}

// writeTree writes the merged version of each kept file whose version
// changed, atomically, unless the file on disk is no longer the local
// version the merge started from (it was edited meanwhile: that edit is
// newer, and the watcher or the next sync records it). The writes are made
// durable together (engine.Checkouts): one fsync pass, then the renames.
func writeTree(eng *engine.Engine, m *engine.Merge, rep *Report) error {
	type change struct {
		k config.Kept
		p engine.MergePath
	}
	var changes []change
	files := 0 // versions to write, deletions aside
	nt := eng.NotTaken()
	for _, p := range m.Paths {
		if k, kept := eng.Config().Classify(p.Path); kept && written(p, nt) {
			p.Ours = onDisk(p, nt) // what the file must still be to be replaced
			changes = append(changes, change{k, p})
			if p.Result != "" {
				files++
			}
		}
	}
	w := eng.Checkouts()
	defer w.Abort()
	w.Expect(files)
	// The versions the ref now holds that the work tree refused: noted as
	// not taken (engine.KeepNotTaken), or, once the obstacle is gone, the
	// missing file was a deletion the next record pushed to every machine
	// (attack33b F4: .claude a link out of the repository, or a folder at
	// each name, at a clone's first sync).
	unwritten := map[string]string{}
	refused := func(p engine.MergePath, why state.Problem) {
		rep.problem(why)
		if p.Result != "" {
			unwritten[p.Path] = p.Result
			rep.notTaken(p.Path, WhyNotWritten+why.Message)
		}
	}
	for _, c := range changes {
		k, p := c.k, c.p
		written, err := w.Add(k, p.Ours, p.Result, p.Content)
		var unwritable *state.Problem
		var refusedPath *engine.PathError
		switch {
		case errors.As(err, &unwritable): // a name too long, a symlink or pipe in the way: said as it is
			refused(p, *unwritable)
		case errors.As(err, &refusedPath) && refusedPath.IO: // not a regular file at the name
			refused(p, state.Problem{Path: p.Path, Message: refusedPath.Reason})
		case err != nil:
			return err
		case written:
			rep.wrote(p)
		default:
			rep.Skipped = append(rep.Skipped, p.Path)
			rep.mergeOver = append(rep.mergeOver, engine.NotWritten{Path: p.Path, Ours: p.Ours, Result: p.Result})
		}
	}
	late, err := w.Commit(func() { crashPoint("half-written") })
	if err != nil {
		return err
	}
	for _, p := range late {
		rep.Written = slices.DeleteFunc(rep.Written, func(q string) bool { return q == p })
		rep.Deleted = slices.DeleteFunc(rep.Deleted, func(q string) bool { return q == p })
		rep.Skipped = append(rep.Skipped, p)
		for _, c := range changes {
			if c.p.Path == p {
				rep.mergeOver = append(rep.mergeOver, engine.NotWritten{Path: p, Ours: c.p.Ours, Result: c.p.Result})
				if c.p.Ours == "" && c.p.Result != "" {
					// a file to create whose name was taken, or whose folder
					// was swapped, meanwhile: a file there is recorded as an
					// edit over the version (the note counts only while the
					// file is absent); none there is not a deletion
					unwritten[p] = c.p.Result
				}
			}
		}
	}
	// the journal, removed only after this, still owes the writes: a crash
	// before the note is kept completes them, or notes them (RecoverWrites)
	if len(unwritten) > 0 {
		if err := eng.KeepNotTaken(unwritten); err != nil {
			return err
		}
	}
	sort.Strings(rep.Written)
	sort.Strings(rep.Deleted)
	sort.Strings(rep.Skipped)
	return nil
}

// Tracking is one remote's tracking ref as `strata status` shows it.
type Tracking struct {
	Remote string `json:"remote"`
	Ref    string `json:"ref"`
	Head   string `json:"head"`
	Ahead  int    `json:"ahead"`  // local commits the remote has not seen
	Behind int    `json:"behind"` // remote commits not merged here yet
}

// Remotes lists the remotes this repository has synced with and how the
// local state ref compares with what was last fetched from each.
func Remotes(eng *engine.Engine) ([]Tracking, error) {
	refs, err := eng.TrackingRefs()
	if err != nil {
		return nil, err
	}
	local, err := eng.Head()
	if err != nil {
		return nil, err
	}
	out := []Tracking{}
	for _, ref := range slices.Sorted(maps.Keys(refs)) {
		h, err := eng.RefHead(ref)
		if err != nil {
			continue
		}
		t := Tracking{Remote: refs[ref], Ref: ref, Head: h}
		if t.Ahead, t.Behind, err = eng.Compare(local, h); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// SyncHome syncs the home ref (the local history of Claude Code's
// auto-memory file) with the same remote, after the state ref: what
// `strata sync --home`, `git config strata.syncHome true` and `watch --sync`
// with it run. The
// report's Shown maps the home tree's name to the path the user knows.
func SyncHome(ctx context.Context, eng *engine.Engine, o Options) (*Report, error) {
	home, err := eng.HomeView()
	if err != nil {
		return nil, err
	}
	var dropped []string
	if !o.DryRun {
		// what a strata before this one took from a remote goes first, in
		// a commit of its own, so that the merge below has only the
		// remote's to leave out (an up-to-date remote gets the deletion
		// with the push)
		if dropped, err = home.DropForeign(); err != nil {
			return nil, fmt.Errorf("sync home: %w", err)
		}
	}
	rep, err := Sync(ctx, home, o)
	if err != nil {
		return nil, fmt.Errorf("sync home: %w", err)
	}
	rep.Dropped = union(rep.Dropped, dropped)
	rep.Shown = map[string]string{engine.HomeName: home.Shown(engine.HomeName)}
	return rep, nil
}

// union is a and b sorted, each path once: a home sync's dropped paths
// may number as many as a remote's files (maxRemoteFiles).
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// refusedHistory words a merge that stopped at a commit whose tree is past
// a kept path's bounds as the refusal of a remote's head is worded, naming
// the remote, the commit and its role (attack24: a peer's commit buried
// under a clean head, later made the merge base, failed every sync with
// "merge: PATH: trees nested more than 63 deep", naming neither); ok is
// false for any other error. (Not "the error itself when not one": an
// error of an uncomparable type, state.Problems, cannot be compared with
// what it returned.)
func refusedHistory(remote string, err error) (_ error, ok bool) {
	var tb *engine.TreeBoundError
	if !errors.As(err, &tb) || tb.Commit == "" {
		return nil, false
	}
	return fmt.Errorf("sync %s: refused %s (nothing merged)", remote, tb.Error()), true
}
