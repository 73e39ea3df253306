package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

// MergeOverEdits keeps both sides where a sync could not write the merged
// version of a MEMORY.md or an MCP graph because the file was edited on
// disk meanwhile — while the sync wrote (live), or after it was killed
// (its journal, completed by the next command). The edit was made on the
// version the merge started from (ours): recorded over the merged version
// as it is, it took out every line and entity the other machine had added,
// on both machines, and nobody was told (attack20-headline H2). So the edit
// is merged again, three-way, over ours with the merged version (result) as
// the earlier side and the edit as the later one, by the class's own merge
// (lines for MEMORY.md, entities and relations for the graph), and that is
// written in its place (putOver: the edit and the new merge recorded in
// one move of the ref). A file of another class, or an edit that already
// holds what the merge would add, is left as it is (recorded next, over
// the merged version, as before); one edited again meanwhile, or unreadable
// for now, stays owed, merged by the next record before it records the
// file. Each NotWritten merged gets
// Merged, the commit that recorded the new merge.
//
// An edit that is invalid (a half-written line, a broken entity) cannot be
// merged: it is quarantined as any invalid version, and the merge to make
// is kept (<gitdir>/strata/merge-again.json) for the record that finds the
// file fixed, which merges the fixed version the same way before recording
// anything else (attack20-final M1: the fix was recorded over the merge,
// the other machine's lines gone again). Such a NotWritten gets Later.
//
// The caller must not hold the write-phase lock exclusively (Put records
// under it, shared): a sync calls it once its write phase is over.
func (e *Engine) MergeOverEdits(nw []NotWritten) []NotWritten {
	// the merges owed for nw (OweMerges) are made here, not by the
	// records its own Puts make (mergeKeptEdits)
	if e.mergingAgain.CompareAndSwap(false, true) {
		defer e.mergingAgain.Store(false)
	}
	var keep []mergeAgain
	have, _ := e.readMergeAgain() // one that cannot be read chains nothing
	for i, n := range nw {
		if n.Found != "" || n.Ours == n.Result {
			continue
		}
		// the merge owed for this write may be chained to an earlier one
		// never made (keepMergeAgain): it starts from the version the edit
		// was made on, not from n.Ours, which the file never was (attack40c
		// H1: the earlier version's lines were taken for the edit's
		// deletions, on every machine)
		ours, since := n.Ours, int64(0)
		if j := slices.IndexFunc(have, func(m mergeAgain) bool { return m.Path == n.Path && m.Result == n.Result }); j >= 0 {
			ours, since = have[j].Ours, have[j].Unended
		}
		owed := mergeAgain{Path: n.Path, Ours: ours, Result: n.Result, Restore: n.Restore, Push: n.Push}
		c, dropped, later, err := e.mergeOverEdit(n.Path, ours, n.Result, n.Restore, since, func(edit string) {
			e.changeMergeAgain(func(ms []mergeAgain) []mergeAgain {
				for j := range ms {
					if ms[j].owes(owed) {
						ms[j].Edit = edit
					}
				}
				return ms
			})
		})
		switch {
		case err != nil: // kept owed (OweMerges), for the next record
		case later == laterInvalid:
			nw[i].Later = true
			owed.Invalid = true
			keep = append(keep, owed)
		case later == laterUnended:
			nw[i].Later, nw[i].Unended = true, true
			owed.Unended = cmp.Or(since, time.Now().UnixNano())
			keep = append(keep, owed)
		default:
			if c != "" {
				nw[i].Merged, nw[i].Dropped = c, dropped
			}
			e.changeMergeAgain(func(ms []mergeAgain) []mergeAgain {
				return slices.DeleteFunc(ms, func(m mergeAgain) bool { return m.owes(owed) })
			})
		}
	}
	if len(keep) > 0 {
		e.keepMergeAgain(keep)
	}
	return nw
}

// OweMerges keeps, durably, the merges MergeOverEdits is to make for the
// writes of nw a journal's completion (or a sync's write phase) left
// undone because the file was edited: called before the journal that owed
// those writes is removed, so a kill between that removal and the merge
// leaves the merge owed (merge-again.json), made by the next record
// (mergeKeptEdits), never dropped: the edit was recorded over the merged
// (or restored) version, and the other machine's lines, or the restore's
// removal, were gone with no word (attack38d H1). An owed merge is
// dropped once made, or found not to be needed.
func (e *Engine) OweMerges(nw []NotWritten) {
	var ms []mergeAgain
	for _, n := range nw {
		if n.Found != "" || n.NotTaken || n.Ours == n.Result || n.Result == "" {
			continue
		}
		if k, ok := e.cfg.Classify(n.Path); !ok || !MergedByContent(k) {
			continue
		}
		ms = append(ms, mergeAgain{Path: n.Path, Ours: n.Ours, Result: n.Result, Restore: n.Restore, Push: n.Push})
	}
	if len(ms) > 0 {
		e.keepMergeAgain(ms)
	}
}

// mergeOverEdit merges the edit on disk at path with the merged version
// result over ours (MergeOverEdits) and returns the commit that recorded
// the new merge, "" when it wrote nothing, and what of the graph's edits
// it could not keep (conflict.GraphLoss: a relation to an entity the other
// side deleted); later says why it was left for
// a later record: the edit is invalid (merged once fixed), or a line is
// still being appended to ours (merged once the line ends, or once
// UnendedWait has passed since the merge was first left so, unended: a
// Unix time in nanoseconds, 0 for never).
//
// beforePut, when not nil, is called with the edit's blob id right before
// the Put that records the edit (when no ref holds it yet) and then the
// new merge: the owed merge names the edit, so a kill between the two
// records leaves it owed still (mergeKeptEdits).
func (e *Engine) mergeOverEdit(path, ours, result string, restore bool, unended int64, beforePut func(edit string)) (commit string, dropped []string, later deferral, err error) {
	k, ok := e.cfg.Classify(path)
	if !ok || result == "" || !MergedByContent(k) {
		return "", nil, mergeNow, nil
	}
	f, prob := e.Read(k)
	if prob != nil {
		return "", nil, mergeNow, prob // unreadable now (a writer's moment, a pipe): still owed
	}
	if !f.Exists || f.ID() == result {
		return "", nil, mergeNow, nil
	}
	// the ref must still hold result there (or the edit, recorded by a
	// strata before one move held both): moved on since (a push into this
	// repository landed, a record of another process), the merge would
	// record the edit merged with an older version over a newer one, whose
	// lines it took out on every machine (attack40c H1: a sync's merge of
	// the journal it completed, made after pushes it had not taken); it
	// stays owed, chained to the newer version (keepMergeAgain) and made by
	// the next record (mergeKeptEdits)
	if _, files, err := e.recorded(); err != nil {
		return "", nil, mergeNow, err
	} else if files[path] != result && files[path] != f.ID() {
		return "", nil, mergeNow, errMovedOn
	}
	if f.ID() == ours {
		// back at the version the merge started from (the invalid line
		// taken out again): the merged version is written, as the sync
		// would have; recorded over the merge, it took the other machine's
		// lines out on both machines (attack20-last M4)
		wrote, err := e.checkout(k, ours, result)
		if err != nil || !wrote {
			return "", nil, mergeNow, err
		}
		head, err := e.Head()
		return head, nil, mergeNow, err
	}
	var base []byte
	if ours != "" {
		if base, err = e.Blob(ours); err != nil {
			return "", nil, mergeNow, err
		}
	}
	if unendedAppend(base, f.Content) && stillWaiting(unended) {
		// a line still being appended to the version the push (or sync)
		// found: merged and recorded now, the half line went to the other
		// machine, whose own append joined it (attack41 F1, a push merged
		// over the edit): merged once the line ends, or once waited for.
		// Before the validity check: a graph's half line is no JSON yet,
		// and a write may end inside a character
		return "", nil, laterUnended, nil
	}
	if e.v.ValidateAs(k.Path, f.Content, k.Schema, k.Format).Invalid() {
		return "", nil, laterInvalid, nil
	}
	res, err := e.Blob(result)
	if err != nil {
		return "", nil, mergeNow, err
	}
	var merged []byte
	if conflict.StrategyFor(k.Class) == conflict.StrategyMemory {
		if merged, err = conflict.MergeMemory(base, res, f.Content); err != nil {
			return "", nil, mergeNow, nil // not mergeable as lines: the edit is recorded as it is
		}
	} else {
		var lost []conflict.GraphLoss
		merged, lost = conflict.MergeGraph(base, res, f.Content)
		for _, l := range lost {
			dropped = append(dropped, l.What)
		}
	}
	if bytes.Equal(merged, f.Content) {
		return "", nil, mergeNow, nil // the edit already holds the other side's work
	}
	if beforePut != nil {
		beforePut(f.ID())
	}
	if beforeMergeWrite != nil {
		beforeMergeWrite()
	}
	src := state.SourceSync
	if restore {
		src = state.SourceRestore // the restore's version merged with the edit, as the restore would have
	}
	o, err := e.putOver(k, f, merged, src)
	if errors.Is(err, ErrChanged) {
		// edited again since it was read (an agent still writing): the
		// merge stays owed, made with the newer edit by the next record,
		// which records nothing of the file before (errMergeFirst).
		// Dropped as done, the newer edit, made on a version without the
		// other machine's entities, was recorded as it was over them, and
		// they were gone on both machines (session-40 chaos run FETb, the
		// watcher's record merging MEMORY.md and then the graph)
		return "", nil, mergeNow, errEditedAgain
	}
	if err != nil || !o.Written || o.Entry == nil {
		return "", nil, mergeNow, err
	}
	return o.Entry.Commit, dropped, mergeNow, nil
}

// deferral is why mergeOverEdit left a merge for a later record.
type deferral uint8

const (
	mergeNow     deferral = iota // made, or not needed
	laterInvalid                 // the edit is invalid: merged once fixed
	laterUnended                 // a line is still being appended: merged once ended
)

// UnendedWait is how long an owed merge waits for a line still being
// appended (unendedAppend) before it is made with the line as it is: a
// file saved without a final newline is legitimate. The watcher holds such
// a file as long (daemon).
var UnendedWait = 2 * time.Second

// stillWaiting reports whether a merge first left for a line still being
// appended at since (Unix nanoseconds, 0 for not yet) waits for it still.
// The wall clock, not the engine's Now: a span between two processes, not
// a date recorded; a time ahead of it (the clock set back, a hand-made
// file) waits no more.
func stillWaiting(since int64) bool {
	return since == 0 || waitLeft(since) > 0
}

// waitLeft is how much of UnendedWait is left of a wait started at since
// (Unix nanoseconds): none once it is over, or when since is ahead of
// the clock.
func waitLeft(since int64) time.Duration {
	d := time.Since(time.Unix(0, since))
	if d < 0 || d >= UnendedWait {
		return 0
	}
	return UnendedWait - d
}

// waitsForLine reports whether the owed merge m, left for a line still
// being appended (mergeOverEdit), still waits for it in edit, the file's
// content now.
func (e *Engine) waitsForLine(m mergeAgain, edit []byte) bool {
	if m.Unended == 0 || !stillWaiting(m.Unended) {
		return false
	}
	var base []byte
	if m.Ours != "" {
		var err error
		if base, err = e.Blob(m.Ours); err != nil {
			return false
		}
	}
	return unendedAppend(base, edit)
}

// UnendedMergeWait is how much longer a merge owed for f's path waits for
// the line still being appended to it (0: none waits): the watcher holds
// the file as long, and records it then, merged.
func (e *Engine) UnendedMergeWait(f File) time.Duration {
	if !endsUnended(f) {
		return 0
	}
	ms, err := e.readMergeAgain()
	if err != nil {
		return 0
	}
	var wait time.Duration
	for _, m := range ms {
		if m.Path == f.Path && e.waitsForLine(m, f.Content) {
			wait = max(wait, waitLeft(m.Unended))
		}
	}
	return wait
}

// LineInProgress reports whether k's file looks like a line still being
// appended (AppendInProgress) and was written less than UnendedWait ago:
// a sync leaves it unrecorded, as the watcher holds it, so that the half
// line is not published (attack42 F4, F6: `watch --sync` and a sync of
// this machine's own recorded it and pushed it, and the other machine's
// own append joined it). Older, it is a file saved without its final
// newline, recorded as any.
func (e *Engine) LineInProgress(k config.Kept) bool {
	if !MergedByContent(k) {
		return false
	}
	st, err := os.Lstat(e.cfg.Abs(k.Path))
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if age := time.Since(st.ModTime()); age >= UnendedWait || age < -UnendedWait {
		return false
	}
	f, prob := e.Read(k)
	return prob == nil && e.AppendInProgress(f)
}

// waitForLine waits, at most UnendedWait, while k's file is a line still
// being appended (LineInProgress).
func (e *Engine) waitForLine(k config.Kept) {
	for deadline := time.Now().Add(UnendedWait); e.LineInProgress(k) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// endsUnended reports whether f is a MEMORY.md or graph (merged by its
// content) whose last line has no line end: the first thing a line still
// being appended to it shows.
func endsUnended(f File) bool {
	return f.Exists && len(f.Content) > 0 && f.Content[len(f.Content)-1] != '\n' && MergedByContent(f.Kept)
}

// unendedAppend reports whether edit is prev with bytes added at the end,
// the last of them no line end, where prev ends with a line end or is
// empty: a line still being appended, its writer between two writes.
func unendedAppend(prev, edit []byte) bool {
	return len(edit) > len(prev) && edit[len(edit)-1] != '\n' &&
		(len(prev) == 0 || prev[len(prev)-1] == '\n') && bytes.HasPrefix(edit, prev)
}

// errEditedAgain is mergeOverEdit's answer when the file changed between
// its read and the merged version's write: the merge stays owed.
var errEditedAgain = errors.New("edited again while the merge was made")

// beforeMergeWrite, set by tests only, runs right before mergeOverEdit
// writes the merged version: a writer saving the file at that moment.
var beforeMergeWrite func()

// errMovedOn is mergeOverEdit's refusal to merge over a version the state
// ref no longer holds: the merge stays owed.
var errMovedOn = errors.New("the state ref moved on since the merge was owed")

// mergeAgain is a merge MergeOverEdits could not make yet: the edit at
// Path was invalid.
type mergeAgain struct {
	Path    string `json:"path"`
	Ours    string `json:"ours"`
	Result  string `json:"result"`
	Restore bool   `json:"restore,omitempty"` // Result is a restore's version, not a merge's
	Push    bool   `json:"push,omitempty"`    // Result is a push's version (pushed.go)
	// Edit is the edit being merged, set right before the Put that records
	// it and then the merge: a state ref at Edit still owes the merge.
	Edit string `json:"edit,omitempty"`
	// Invalid says the edit was invalid when the merge was first tried
	// (MergeOverEdits kept it for later); without it the merge was owed by
	// a command killed before it made it (OweMerges).
	Invalid bool `json:"invalid,omitempty"`
	// Unended is when the merge was first left because a line was still
	// being appended to Ours (Unix nanoseconds): made once the line ends,
	// or UnendedWait after.
	Unended int64 `json:"unended,omitempty"`
}

// owed names the version m merges an edit with, as NotWritten.Owed does.
func (m mergeAgain) owed() string {
	return NotWritten{Restore: m.Restore, Push: m.Push}.Owed()
}

// owes reports whether m is the merge o (its path and versions; Edit aside).
func (m mergeAgain) owes(o mergeAgain) bool {
	return m.Path == o.Path && m.Ours == o.Ours && m.Result == o.Result
}

// changeMergeAgain changes the merges kept for later under their file's
// lock; a file that cannot be read is left as it is.
func (e *Engine) changeMergeAgain(change func([]mergeAgain) []mergeAgain) {
	release, err := pidlock.Hold(e.mergeAgainPath()+".lock", e.store.Shared(), true, WritesWait)
	if err != nil {
		return
	}
	defer release()
	have, err := e.readMergeAgain()
	if err != nil || len(have) == 0 {
		return
	}
	e.writeMergeAgain(change(have))
}

func (e *Engine) mergeAgainPath() string {
	return filepath.Join(e.store.GitDir(), "strata", "merge-again.json")
}

// keepMergeAgain adds ms to the merges kept for later, under their file's
// lock.
func (e *Engine) keepMergeAgain(ms []mergeAgain) {
	release, err := pidlock.Hold(e.mergeAgainPath()+".lock", e.store.Shared(), true, WritesWait)
	if err != nil {
		return
	}
	defer release()
	have, _ := e.readMergeAgain() // one that cannot be read holds nothing to keep
	for _, m := range ms {
		if j := slices.IndexFunc(have, m.owes); j >= 0 {
			have[j].Invalid = have[j].Invalid || m.Invalid
			have[j].Unended = cmp.Or(have[j].Unended, m.Unended)
			continue
		}
		if j := slices.IndexFunc(have, m.follows); j >= 0 {
			// the merge owed before was never made, so the file was never
			// at its result, which this one starts from: one merge, from
			// the version the edit was made on to the newest result
			// (attack40 F1: the later merge alone took the lines of the
			// earlier result for the edit's deletions, on both machines)
			h := have[j]
			have[j] = mergeAgain{Path: m.Path, Ours: h.Ours, Result: m.Result, Restore: m.Restore, Push: m.Push, Invalid: h.Invalid || m.Invalid, Unended: cmp.Or(h.Unended, m.Unended)}
			continue
		}
		have = append(have, m)
	}
	e.writeMergeAgain(have)
}

// heldBy reports whether the snapshot files (path -> blob id) still owes
// m: its path is at m's result, or at the edit its Put records first.
func (m mergeAgain) heldBy(files map[string]string) bool {
	return files[m.Path] == m.Result || m.Edit != "" && files[m.Path] == m.Edit
}

// follows reports whether h is a merge owed before o, at o's path, whose
// result o starts from: o was owed because the file, still not merged
// with h's result, was not that result either.
func (o mergeAgain) follows(h mergeAgain) bool {
	return h.Path == o.Path && h.Result != "" && h.Result == o.Ours && h.Ours != o.Ours
}

// readMergeAgain reads the merges kept for later: none when there is no
// file; an error when there is one that cannot be read or does not parse
// (a named pipe, garbage), which is then left as it is and named by
// status, not forgotten (attack20-last M5).
func (e *Engine) readMergeAgain() ([]mergeAgain, error) {
	data, err := state.ReadRegular(e.mergeAgainPath(), 1<<20, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var ms []mergeAgain
	if err := json.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("%s: %v", e.mergeAgainPath(), err)
	}
	return ms, nil
}

func (e *Engine) writeMergeAgain(ms []mergeAgain) {
	name := e.mergeAgainPath()
	if len(ms) == 0 {
		os.Remove(name)
		return
	}
	data, err := json.Marshal(ms)
	if err != nil {
		return
	}
	sh := e.store.Shared()
	if sh.MkdirAll(filepath.Dir(name)) == nil {
		_ = atomicfile.WriteFixed(name, data, sh.FixFile) // as the journal and the losses are written
	}
}

// PendingMerges lists the paths whose merge MergeOverEdits kept for later,
// for status to name: invalid, those whose edit was invalid (made once it
// is fixed); unended, those that wait for a line still being appended
// (made once it ends, or UnendedWait after); the others were owed by a command killed before it made them
// (OweMerges), which the next record makes. The error is the file's, when
// it cannot be read: merges kept there may be missing from the list.
func (e *Engine) PendingMerges() (paths []string, invalid, unended map[string]bool, err error) {
	ms, err := e.readMergeAgain()
	invalid, unended = map[string]bool{}, map[string]bool{}
	for _, m := range ms {
		if !slices.Contains(paths, m.Path) {
			paths = append(paths, m.Path)
		}
		invalid[m.Path] = invalid[m.Path] || m.Invalid
		unended[m.Path] = unended[m.Path] || m.Unended != 0
	}
	slices.Sort(paths)
	return paths, invalid, unended, err
}

// mergeKeptEdits makes the merges kept for later whose edit is valid now
// (the agent fixed the file), before a record takes the fixed file over
// the merged version; one whose path the state ref no longer holds at the
// merged version (something else was recorded there since) is dropped.
// A record calls it with the write-phase lock held shared; the records it
// makes itself (Put) do not call it again.
func (e *Engine) mergeKeptEdits() {
	if _, err := os.Lstat(e.mergeAgainPath()); err != nil || !e.mergingAgain.CompareAndSwap(false, true) {
		return
	}
	defer e.mergingAgain.Store(false)
	release, err := pidlock.Hold(e.mergeAgainPath()+".lock", e.store.Shared(), true, WritesWait)
	if err != nil {
		return
	}
	defer release()
	if afterMergeAgainLock != nil {
		afterMergeAgainLock()
	}
	head, files, err := e.recorded()
	if err != nil {
		return
	}
	if o, err := e.outsideMove(); err != nil || o.pending || o.head != head {
		// a push landed after this record took the ones before it (read
		// after the snapshot: one landing between the two is seen too):
		// the owed merges are judged once it is taken (the record's move
		// refuses, and it comes back here), chained to it; judged now,
		// each whose version the push replaced was dropped as "recorded
		// over since", and the one owed for the push alone took the lines
		// before it for the edit's deletions (attack40d F0)
		return
	}
	ms, err := e.readMergeAgain()
	if err != nil {
		return // left as it is; status names it
	}
	var keep []mergeAgain
	for i, m := range ms {
		if !m.heldBy(files) {
			continue // recorded over since, other than by the merge's own Put
		}
		c, dropped, later, err := e.mergeOverEdit(m.Path, m.Ours, m.Result, m.Restore, m.Unended, func(edit string) {
			ms[i].Edit = edit
			e.writeMergeAgain(append(append([]mergeAgain{}, keep...), ms[i:]...))
		})
		m = ms[i]
		switch {
		case later == laterUnended && m.Unended == 0:
			m.Unended = time.Now().UnixNano()
			keep = append(keep, m)
		case err != nil, later != mergeNow:
			keep = append(keep, m)
		case c != "":
			n := NotWritten{Path: m.Path, Ours: m.Ours, Result: m.Result, Merged: c, Dropped: dropped, Restore: m.Restore, Push: m.Push, Unended: m.Unended != 0}
			if !m.Invalid && m.Unended == 0 {
				n.Rev = head // owed by a command killed before it merged: said as that command would have
			}
			e.noteNotWritten(n)
		}
	}
	e.writeMergeAgain(keep)
}

// afterMergeAgainLock, set by tests only, runs once mergeKeptEdits holds
// the owed merges' lock: a push landing at that moment.
var afterMergeAgainLock func()

// MergedByContent reports whether a sync merges k's versions by their
// content, keeping both sides' additions: MEMORY.md by lines, the MCP graph
// by entities, each under its own schema.
func MergedByContent(k config.Kept) bool {
	switch conflict.StrategyFor(k.Class) {
	case conflict.StrategyMemory:
		return k.Schema == "markdown"
	case conflict.StrategyGraph:
		return k.Schema == "mcp-memory" || k.Schema == "jsonl-mcp"
	}
	return false
}

// AppendInProgress reports whether f, a MEMORY.md or MCP graph read on
// disk, looks like a line still being appended: it is the version the
// state ref holds (which ends with a line end, or is empty) with bytes
// added at the end, the last of them no line end. A writer appending a
// line in two writes, pausing between them longer than the watcher's
// debounce, left such a version; recorded, a sync wrote the half line on
// the other machine, whose own append (`echo … >>`) then joined it, and
// both lines were gone as lines (attack41 F1). The watcher waits a little
// longer for such a version (daemon: holdUnended).
func (e *Engine) AppendInProgress(f File) bool {
	if !endsUnended(f) {
		return false
	}
	head, err := e.Head()
	if err != nil || head == "" {
		return false
	}
	prev, err := e.FileAt(head, f.Path)
	return err == nil && unendedAppend(prev, f.Content)
}
