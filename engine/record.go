package engine

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// Record validates the current content of each kept path and records every
// valid change as its own commit on the state ref (with source src). An
// invalid version is recorded on the rejected ref and reported in its
// Outcome; the recorded head keeps the last valid version. Recording content
// equal to the head records nothing. It is idempotent.
//
// The valid changes are written together (gitstore.RecordEach): one commit
// per change, their objects in one pack for a large batch, and the ref moved
// once, after the objects are on disk. Rejections are quarantined after
// that, each on the rejected ref with the new state head's snapshot, also
// written together (gitstore.RejectEach). When recording fails nothing of
// the batch is on the state ref.
func (e *Engine) Record(paths []config.Kept, src state.Source) ([]Outcome, error) {
	e.noteHead()
	return e.record(paths, src, nil)
}

// RecordRead is Record, recording for each path in read the content given
// there instead of reading the file again: the watcher read a file its
// writer never let rest, found it whole, and records those very bytes (a
// second read could fall on the writer's next truncation and be taken for
// a settled, invalid version: attack30c G1), the auto-memory file in the
// home folder included.
func (e *Engine) RecordRead(paths []config.Kept, src state.Source, read map[string][]byte) ([]Outcome, error) {
	e.noteHead()
	return e.record(paths, src, read)
}

// Differing returns those of paths whose file is not what the state ref's
// head (the home ref's, for the auto-memory file) records: changed, made,
// deleted, or not readable as a kept file. It records nothing. It first
// completes a sync journal as Record does (its notes are taken with
// TakeNotWritten), so a file an interrupted sync owed is judged written. A
// file outside the work tree that has no home history is never returned:
// Record records nothing of it. The watcher's rescan reads what it returns
// again once quiet (daemon).
func (e *Engine) Differing(paths []config.Kept) ([]config.Kept, error) {
	release, err := e.readyToRecord()
	if err != nil {
		return nil, err
	}
	defer release()
	_, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	var out []config.Kept
	for _, k := range paths {
		if OutsideTree(k.Path) {
			hk, ok := e.homeKept(k)
			if !ok {
				continue
			}
			h, err := e.homeView()
			if err != nil {
				return nil, err
			}
			d, err := h.Differing([]config.Kept{hk})
			if err != nil {
				return nil, err
			}
			if len(d) > 0 {
				out = append(out, k)
			}
			continue
		}
		if f, p := e.Read(k); p != nil || f.ID() != files[k.Path] && !(!f.Exists && e.notTakenHere(k.Path, files[k.Path])) {
			out = append(out, k)
		}
	}
	return out, nil
}

// noteHead has the rules of HEAD noted, and those of the HEADs before it
// kept when their .gitignore files differ (gitstore.Ignores.NoteHead), even
// when no kept file asks: a record, init or a watcher's batch in a
// repository with nothing kept yet still marks where the .gitignore files
// stood.
func (e *Engine) noteHead() {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	ig.NoteHead()
}

// record is Record, taking the content of a path in wrote, when there,
// from it rather than from disk: Put records the version it wrote, even
// when another writer has replaced the file since (that version is then
// recorded next, as any edit).
func (e *Engine) record(paths []config.Kept, src state.Source, wrote map[string][]byte) ([]Outcome, error) {
	return e.recordOver(paths, src, wrote, nil, false)
}

// recordOver is record, where before gives, by path, a version recorded as
// its own commit (source record) right before the path's change, in the
// same move of the state ref, when the ref's head does not hold it: the
// unrecorded edit a merged version replaces (putOver). Its entry is the
// Outcome's Saved. With saveAll, every valid version is recorded as it is,
// a file whose merge is owed too (not merged first, nor left waiting for
// a line): its bytes are about to be replaced (saveOnDisk).
func (e *Engine) recordOver(paths []config.Kept, src state.Source, wrote, before map[string][]byte, saveAll bool) ([]Outcome, error) {
	for attempt := 0; ; attempt++ {
		release, err := e.readyToRecord()
		if err != nil {
			return nil, err
		}
		if beforeRecordHeld != nil {
			beforeRecordHeld()
		}
		out, err := e.recordHeld(paths, src, wrote, before, recordMode{saveAll: saveAll, lastTry: attempt >= maxPushRounds})
		release()
		// a push into this repository landed after readyToRecord took the
		// moves before it: the ref did not move, and the record is made
		// again once that push is taken (pushed.go); or a file whose merge
		// is owed turned valid after readyToRecord judged it: made again,
		// so that the merge is made first
		var outside *gitstore.OutsideMoveError
		if (errors.As(err, &outside) || errors.Is(err, errMergeFirst)) && attempt < maxPushRounds {
			continue
		}
		return out, err // the last try leaves such a file unrecorded (recordMode)
	}
}

// readyToRecord starts what reads the kept files against the ref as a
// record does: it takes the write-phase lock (no sync in its write phase
// meanwhile), completes an interrupted sync's journal and merges the edits
// that sync kept; release gives the lock back.
func (e *Engine) readyToRecord() (release func(), err error) {
	if err := e.takePush(); err != nil { // a push into this repository, first (pushed.go)
		return nil, err
	}
	release, err = e.holdWrites(false)
	if err != nil {
		return nil, err
	}
	if err := e.recoverWrites(true); err != nil {
		release()
		return nil, err
	}
	e.mergeKeptEdits()
	return release, nil
}

// beforeRecordHeld, set by tests only, runs between readyToRecord and
// recordHeld: a writer saving a file at that moment.
var beforeRecordHeld func()

// recordMode is how recordHeld treats a file whose merge with another
// version is owed: saveAll records it as it is (its bytes are about to be
// replaced: saveOnDisk); lastTry, in the record's last round, leaves it
// unrecorded with a warning rather than the whole batch (errMergeFirst).
type recordMode struct {
	saveAll, lastTry bool
}

// errMergeFirst is recordHeld's refusal to record, as an edit, a valid
// version of a file whose merge with another machine's version is owed
// (merge-again.json): recorded as it is, it took that machine's lines
// out on every machine (attack40e H1: the edit turned valid, its writer's
// second write landing, after readyToRecord had found it invalid and
// left the merge for later). The record is made again, merging first.
var errMergeFirst = errors.New("a file whose merge is owed turned valid: merged first")

// recordHeld is record for a caller that holds the write-phase lock and
// has completed any sync journal (RecoverWrites, recording a leftover).
func (e *Engine) recordHeld(paths []config.Kept, src state.Source, wrote, before map[string][]byte, mode recordMode) ([]Outcome, error) {
	if err := e.voidNotTaken(paths); err != nil {
		return nil, err
	}
	head, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, 0, len(paths))
	var (
		batch   []state.Change
		at      []int                 // batch[i] is out[at[i]]
		saves   = map[int]bool{}      // batch[i] is before's version of out[at[i]]: its Saved
		planned = map[string][]byte{} // content this batch gives a path (nil: deleted)
		invalid []invalidVersion
	)
	// the files whose merge with another machine's version is owed over
	// the version the ref holds (not while that merge is being made)
	owedMerge := map[string]mergeAgain{}
	if !e.mergingAgain.Load() && !mode.saveAll {
		if ms, err := e.readMergeAgain(); err == nil {
			for _, m := range ms {
				if m.heldBy(files) {
					owedMerge[m.Path] = m
				}
			}
		}
	}
	prov := &provenanceUse{e: e} // the hook's notes, read once
	defer prov.finish()
	atHead := &headHolds{e: e}
	gone, err := e.deletedPaths(paths, files)
	if err != nil {
		return nil, err
	}
	for _, k := range paths {
		if OutsideTree(k.Path) {
			// never on the state ref, which sync publishes: on the home ref (home.go)
			o, err := e.recordHome(k, src, wrote)
			if err != nil {
				return out, err
			}
			out = append(out, o)
			continue
		}
		var save *state.Change
		if data, ok := before[k.Path]; ok {
			if id := gitstore.BlobHash(data); id != files[k.Path] {
				save = &state.Change{Path: k.Path, Content: data, Class: k.Class, Schema: k.Schema, Source: state.SourceRecord, Time: e.Now()}
				save.Session, save.ToolUse = prov.ids(k.Path, id)
				save.AtHead = atHead.of(k.Path, id, data)
				files[k.Path], planned[k.Path] = id, data // the path's change is judged over it
			}
		}
		o, ch, err := e.prepare(k, src, head, files, gone, planned, wrote)
		if err != nil {
			return out, err
		}
		if m, owed := owedMerge[k.Path]; owed && ch != nil && save == nil {
			switch {
			case e.waitsForLine(m, ch.Content):
				// its merge waits for the line being appended
				// (mergeOverEdit): recorded with the merge, not before it,
				// nor rejected while the line (a graph's JSON) is half
				// written
				o.Problems = state.Problems{{Path: k.Path, Pointer: "/", Warning: true, Message: fmt.Sprintf(
					"a line is still being appended: not recorded yet; merged with %s once the line ends (or in %s), by the next record",
					m.owed(), UnendedWait)}}
				o.WaitsForLine, o.unmerged, ch = true, true, nil
			case !o.Problems.Invalid() && mode.lastTry:
				// the merge could not be made in any try (its versions
				// unreadable, the file still turning over): this file
				// waits, the others are recorded (attack42 M1: an owed
				// merge that could never be made kept every record from
				// recording anything, with no word)
				o.Problems = state.Problems{{Path: k.Path, Pointer: "/", Warning: true, Message: fmt.Sprintf(
					"not recorded yet: its merge with %s is owed and could not be made (strata status names it)",
					m.owed())}}
				o.unmerged, ch = true, nil
			case !o.Problems.Invalid():
				return nil, errMergeFirst
			}
		}
		switch {
		case ch == nil:
		case o.Problems.Invalid():
			invalid = append(invalid, invalidVersion{len(out), *ch})
		default:
			if save != nil {
				saves[len(batch)] = true
				batch = append(batch, *save)
				at = append(at, len(out))
			}
			if ch.Deleted {
				delete(files, k.Path)
				ch.AtHead = atHead.removed(k.Path)
			} else {
				id := gitstore.BlobHash(ch.Content)
				files[k.Path] = id
				ch.Session, ch.ToolUse = prov.ids(k.Path, id)
				ch.AtHead = atHead.of(k.Path, id, ch.Content)
			}
			batch = append(batch, *ch)
			at = append(at, len(out))
			planned[k.Path] = ch.Content
		}
		out = append(out, o)
	}
	if len(batch) > 0 {
		ents, err := e.store.RecordEach(batch)
		if err != nil && !errors.Is(err, state.ErrUnchanged) {
			return out, fmt.Errorf("record: %w", err)
		}
		for i := range ents {
			if ents[i].Commit == "" {
				continue
			}
			prov.recorded(batch[i].Path)
			if saves[i] {
				out[at[i]].Saved = &ents[i]
				continue
			}
			out[at[i]].Entry = &ents[i]
		}
	}
	var fresh []invalidVersion
	for _, v := range invalid {
		if !e.alreadyRejected(v.ch) {
			fresh = append(fresh, v)
		}
	}
	return out, e.quarantine(out, fresh)
}

// prepare reads and checks one kept path against the snapshot (head, files)
// as this batch leaves it (planned). It returns the change to record or to
// quarantine (by its Outcome's problems), or nil when there is none. A
// path in wrote is not read: its content is wrote's (see record). A path
// outside the work tree never reaches it: Record sends it to the home ref.
func (e *Engine) prepare(k config.Kept, src state.Source, head string, files map[string]string, gone map[string]bool, planned, wrote map[string][]byte) (Outcome, *state.Change, error) {
	o := Outcome{Path: k.Path}
	var f File
	var p *state.Problem
	if data, ok := wrote[k.Path]; ok {
		f = File{Kept: k, Content: data, Exists: true}
	} else {
		f, p = e.Read(k)
	}
	if p != nil {
		o.Problems, o.unread = state.Problems{*p}, p
		return o, nil, nil // not readable as a regular file: reported, never stored
	}
	return e.judge(f, src, head, files, gone, planned)
}

// judge is prepare's verdict on the version f read of a kept path: nil
// when it is the recorded one (or a version a sync did not take here),
// else the change, invalid (for the rejected ref) when its Outcome's
// problems say so. A restore's plan asks it too (judgeOnDisk), so that
// what --dry-run says it would save, and where, is what record does.
func (e *Engine) judge(f File, src state.Source, head string, files map[string]string, gone map[string]bool, planned map[string][]byte) (Outcome, *state.Change, error) {
	k := f.Kept
	o := Outcome{Path: k.Path}
	o.read, o.seen = true, f.ID()
	if f.ID() == files[k.Path] {
		return o, nil, nil // unchanged (or still absent): no loops on our own writes
	}
	if !f.Exists && e.notTakenHere(k.Path, files[k.Path]) {
		return o, nil, nil // a version a sync kept in the ref but did not take here: no deletion
	}
	if !f.Exists {
		if why := e.notTakenUnreadable(); why != "" {
			o.Problems = state.Problems{{Path: k.Path, Pointer: "/", Warning: true, Message: fmt.Sprintf(
				"absent, and the sync's not-taken note cannot be read (%s: %s): not recorded as a deletion, as a sync may have left it unwritten here; look at the note, then remove it (rm %s) to record deletions again",
				e.notTakenPath(), why, state.ShellWord(e.notTakenPath()))}}
			return o, nil, nil
		}
	}
	var prev []byte
	if data, ok := planned[k.Path]; ok {
		prev = data
	} else {
		var err error
		if prev, err = e.lastVersion(k, head, files, gone); err != nil {
			return o, nil, err
		}
	}
	ch := state.Change{Path: k.Path, Content: f.Content, Deleted: !f.Exists, Class: k.Class, Schema: k.Schema, Source: src, Time: e.Now()}
	o.Problems = e.Check(f, prev)
	return o, &ch, nil
}

// RemoveTempLeftovers removes, from the folders of kept files where the
// scan saw strata's temp files, those of processes no longer running (a
// restore, a sync or a Put killed between writing a new version and
// renaming it, or right after swapping it in; see removeLeftovers),
// recording first any whose content no ref holds. Each is a whole copy of
// a kept file, hidden behind a dot: left, it would go into the user's next
// `git add -A` under a name no ignore rule of the file covers. Those left
// in strata's own folders of the git directory go too (removeOwnLeftovers).
func (e *Engine) RemoveTempLeftovers(paths []config.Kept) []config.Kept {
	e.removeOwnLeftovers()
	dirs := e.cfg.TempDirs()
	if len(dirs) == 0 {
		return paths
	}
	in := map[string]bool{}
	for _, d := range dirs {
		in[d] = true
	}
	var ks []config.Kept
	for _, k := range paths {
		if in[path.Dir(k.Path)] {
			ks = append(ks, k) // every kept file there: a leftover is for one of them
		}
	}
	found := e.removeLeftovers(ks, false)
	for _, path := range slices.Sorted(maps.Keys(found)) {
		// named as a sync's journal names one (attack19 verify N2: recorded
		// without a word)
		f := found[path]
		e.noteNotWritten(NotWritten{Path: path, Found: f.commit, FoundRejected: f.rejected})
		if !slices.ContainsFunc(paths, func(k config.Kept) bool { return k.Path == path }) {
			if k, ok := e.cfg.Classify(path); ok {
				paths = append(paths, k) // no file of that name on disk: its absence is recorded next
			}
		}
	}
	return paths
}

// Unrecorded lists the kept paths whose file is not the version the state
// ref's head records: edited, created, deleted, or not readable as a regular
// file (Record reports those). It records nothing, so a sync runs it while
// it fetches and then records only these; what changes after it ran is
// found by the writer's own check of each file (Checkouts) and recorded
// later, as an edit made after any record is. Paths outside the work tree
// (and the home view's one file) are always listed: Record decides.
func (e *Engine) Unrecorded() ([]config.Kept, error) { return e.unrecorded(true, "") }

// UnrecordedPlan is Unrecorded for a dry run: it writes nothing (the temp
// files killed writers left are not recorded or removed first).
func (e *Engine) UnrecordedPlan() ([]config.Kept, error) { return e.unrecorded(false, "") }

// UnrecordedPlanAt is UnrecordedPlan judged against the files of commit at
// rather than the state ref's head: a dry run's plan when the run would
// first put a push into this repository back there (PendingPush).
func (e *Engine) UnrecordedPlanAt(at string) ([]config.Kept, error) {
	return e.unrecorded(false, at)
}

func (e *Engine) unrecorded(sweep bool, at string) ([]config.Kept, error) {
	paths, err := e.AllPaths()
	if err != nil || e.display != "" {
		return paths, err
	}
	if sweep {
		paths = e.RemoveTempLeftovers(paths)
	}
	var files map[string]string
	if at != "" {
		files, err = e.filesAt(at)
	} else {
		_, files, err = e.recorded()
	}
	if err != nil {
		return nil, err
	}
	out := paths[:0]
	for _, k := range paths {
		if !OutsideTree(k.Path) {
			if f, p := e.Read(k); p == nil && (f.ID() == files[k.Path] || !f.Exists && e.notTakenHere(k.Path, files[k.Path])) {
				continue // as prepare finds it: nothing to record
			}
		}
		out = append(out, k)
	}
	return out, nil
}
