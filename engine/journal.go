package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

// The sync journal makes a sync's write phase recoverable. A sync moves the
// state ref to the merged head and then writes the kept files whose version
// changed; a crash between the two would leave the old files on disk, and
// the next record (or the watcher's catch-up) would record them as new local
// edits and the next sync would push them: the other machine's work reverted
// everywhere. So, before the ref moves, the sync writes the journal of the
// writes it owes (path, the version on disk it expects, the merged version),
// and removes it when they are done. Every Record and every sync first
// completes a journal left behind: an entry whose merged version is what the
// state ref now records and whose file on disk is still the expected old
// version is written; anything else (the ref never moved, the file was
// edited since) is left alone. The journal also holds the local versions
// the merge did not take and the head it started from: when the ref has
// moved from that head, completing the journal keeps those losses
// (KeepLosses), so a sync killed after its merge never drops the notice. The
// journal is then removed. A restore writes the same journal (beginRestore,
// By "restore") before its commit and holds the same lock (putBack): its
// writes are owed only once the ref has moved from From.

// A sync's write phase and every Record are ordered by a lock beside the
// journal (writesLock): the sync holds it exclusively from completing a
// journal left behind, through writing its own, moving the ref and writing
// the files it owes, to removing the journal; a Record holds it shared for
// its whole run. Without it a record in another process (a hook, the
// watcher, a second terminal) found the live sync's journal before the ref
// moved, took it for a dead one whose ref never moved and removed it; a
// kill of the sync after its ref move then left the old files to be
// recorded over the merge, the other machine's work reverted with no word.
// It also completed the owed writes of a live sync, which then reported
// them as edited by the user. A journal found while holding the lock was
// left by a sync that is no longer running: the kernel releases the lock of
// a process that dies.

// WritesWait is how long a record waits for a sync's write phase (or a sync
// for the records under way) before it gives up; tests shorten it.
var WritesWait = time.Minute

func (e *Engine) writesLock() string { return e.journalPath() + ".lock" }

// lockWrites takes the exclusive flock(2) on <common dir>/strata/writes.lock,
// waiting for it, and returns its release. Every strata process holds it
// while it compares a kept file with the version it expects and renames the
// new version over it (write, Checkouts.Commit), so that two of them never
// both find the same old version and each rename theirs over it, the
// second silently dropping the first's. The kernel drops the lock when its
// holder dies; the file is never removed (the lock lives on its inode).
func (e *Engine) lockWrites() (func(), error) {
	release, err := pidlock.Hold(filepath.Join(e.store.CommonDir(), "strata", "writes.lock"), e.store.Shared(), true, -1)
	if err != nil {
		return nil, fmt.Errorf("lock writes: %w", err)
	}
	return release, nil
}

// HoldWrites takes the write-phase lock exclusively, for a sync's write
// phase (see above); release lets it go.
func (e *Engine) HoldWrites() (release func(), err error) { return e.holdWrites(true) }

func (e *Engine) holdWrites(exclusive bool) (func(), error) {
	release, err := pidlock.Hold(e.writesLock(), e.store.Shared(), exclusive, WritesWait)
	if held := (*pidlock.HeldError)(nil); errors.As(err, &held) {
		what := "a sync or restore is writing the kept files"
		if exclusive {
			what = "a record is under way"
		}
		return nil, fmt.Errorf("%s (%s held for %s); try again: %w", what, held.Path, WritesWait, state.ErrLocked)
	}
	if err != nil {
		return nil, err
	}
	// counted, so that takePush, which takes the lock exclusively, is not
	// run by a caller of this engine that holds it already (a merge's Put
	// inside a record): the flock of a second descriptor would wait for
	// this process's own
	e.writesHeld.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			e.writesHeld.Add(-1)
			release()
		})
	}, nil
}

// SyncWait is how long a sync waits for another sync of the same work tree
// (and view) to finish before it gives up; tests shorten it.
var SyncWait = 2 * time.Minute

// HoldSync takes the lock one sync of this repository (or of its home
// views) holds from start to end, so a second sync waits for the first
// instead of racing its fetch (git's own "cannot lock ref" error, exit 3)
// and its merge; release lets it go. The lock is in the common git
// directory: linked worktrees have state refs of their own but share the
// remote-tracking refs their fetches move (attack19-crash 6). Past SyncWait
// the error says another sync is running.
func (e *Engine) HoldSync() (release func(), err error) {
	name := "sync.lock"
	if e.display != "" {
		name = "sync-home.lock" // the home view's (home.go)
	}
	release, err = pidlock.Hold(filepath.Join(e.store.CommonDir(), "strata", name), e.store.Shared(), true, SyncWait)
	if held := (*pidlock.HeldError)(nil); errors.As(err, &held) {
		return nil, fmt.Errorf("another sync of this repository is running (%s held for %s); try again: %w", held.Path, SyncWait, state.ErrLocked)
	}
	return release, err
}

// JournalEntry is one write a sync owes the work tree. Ours and Result are
// blob ids; "" means the file is absent.
type JournalEntry struct {
	Path   string `json:"path"`
	Ours   string `json:"ours"`
	Result string `json:"result"`
}

type journal struct {
	Writes []JournalEntry `json:"writes"`
	From   string         `json:"from,omitempty"` // the state ref's head the merge (or restore) started from
	Lost   []Lost         `json:"lost,omitempty"` // the local versions the merge does not take
	// By is "restore" for a restore's journal (beginRestore), "" for a
	// sync's: a restore's writes are owed only once the ref has moved
	// from From, so a restore killed before its commit is undone, not
	// half done.
	By string `json:"by,omitempty"`
	// To is, for a push's journal (By "push", pushed.go), the head the
	// writes are owed for: another push may move the ref on before they
	// are done, and that one is taken on its own.
	To string `json:"to,omitempty"`
}

func (e *Engine) journalPath() string {
	if e.display != "" {
		return filepath.Join(e.store.GitDir(), "strata", "sync-journal-home") // the home view's (home.go)
	}
	return filepath.Join(e.store.GitDir(), "strata", "sync-journal")
}

// BeginWrites durably records, before the state ref moves from head from,
// the writes a sync is about to owe and the local versions its merge does
// not take. Nothing owed and nothing lost writes no journal.
func (e *Engine) BeginWrites(from string, entries []JournalEntry, lost []Lost) error {
	if len(entries) == 0 && len(lost) == 0 {
		return nil
	}
	return e.beginJournal(journal{Writes: entries, From: from, Lost: lost}, "nothing merged")
}

// beginRestore durably records, before a restore moves the state ref from
// head from, the writes it will then owe the work tree (see Restore): a
// restore killed after its commit is completed by the next command, one
// killed before it is undone (RecoverWrites).
func (e *Engine) beginRestore(from string, entries []JournalEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return e.beginJournal(journal{Writes: entries, From: from, By: "restore"}, "nothing restored")
}

func (e *Engine) beginJournal(j journal, nothing string) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if len(data) > maxJournal { // refused before the ref moves: nothing changed
		return fmt.Errorf("%s journal: %d writes and %d losses make a journal of %d bytes, over the %d strata reads back; %s", j.writer(), len(j.Writes), len(j.Lost), len(data), maxJournal, nothing)
	}
	name := e.journalPath()
	sh := e.store.Shared()
	if err := sh.MkdirAll(filepath.Dir(name)); err != nil {
		return fmt.Errorf("%s journal: %w", j.writer(), err)
	}
	if err := atomicfile.WriteFixed(name, data, sh.FixFile); err != nil {
		return fmt.Errorf("%s journal: %w", j.writer(), err)
	}
	return nil
}

// writer is the command that wrote j: "sync", "restore", or "push" (a
// push into this repository taken, pushed.go).
func (j *journal) writer() string {
	if j.By == "restore" || j.By == "push" {
		return j.By
	}
	return "sync"
}

// EndWrites removes the journal once every owed write is done.
func (e *Engine) EndWrites() error {
	err := os.Remove(e.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// maxJournal bounds the journal: BeginWrites writes none larger (the sync
// stops before its ref moves, nothing merged) and readJournal reads none
// larger, taking one for damaged as it takes one that is not JSON (a 2 GB
// file made record and doctor read it whole, 2.1 GB of memory: attack34
// L4). A write is about 110 bytes and its path, a loss about 190, its
// path and a reason of at most 300: a sync of every file a remote may
// hold (100 000), with 200-byte paths, each both written and lost with a
// full reason, writes about 100 MB; real ones write kilobytes.
var maxJournal = 128 << 20

// readJournal reads the journal a sync left: nil when there is none, torn
// when it was never written whole (so the ref never moved past it) or is
// damaged: not JSON, or larger than maxJournal, which no sync writes.
func (e *Engine) readJournal() (j *journal, torn bool, err error) {
	data, err := state.ReadRegular(e.journalPath(), int64(maxJournal), true)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if errors.Is(err, state.ErrTooLarge) {
		return nil, true, nil
	}
	if errors.Is(err, state.ErrNotRegular) {
		// a named pipe, folder or link planted there: strata writes a
		// regular file, so nothing it owes is in it
		return nil, false, fmt.Errorf("sync journal %s: %w (strata writes a regular file there and never makes this: look at it, remove it, and run the command again)", e.journalPath(), err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("sync journal: %w", err)
	}
	j = &journal{}
	if json.Unmarshal(data, j) != nil {
		return nil, true, nil
	}
	return j, false, nil
}

// pendingLosses is the losses of a journal left behind by a sync that moved
// the state ref: none when there is no journal or the ref never moved. It
// changes nothing.
func (e *Engine) pendingLosses() ([]Lost, error) {
	j, _, err := e.readJournal()
	if j == nil || len(j.Lost) == 0 || err != nil {
		return nil, err
	}
	head, err := e.Head()
	if err != nil || head == j.From {
		return nil, err
	}
	return j.Lost, nil
}

// RecoverWrites completes a sync that was interrupted (see above): it
// writes the files the sync owed, keeps the losses of its merge, and
// returns the owed writes it left undone and those losses (none when the ref never moved). Without a journal it does nothing. Its caller holds the
// write-phase lock (Record shared, a sync exclusively), so a journal it
// finds is a dead sync's.
func (e *Engine) RecoverWrites() (notWritten []NotWritten, lost []Lost, err error) {
	j, torn, err := e.readJournal()
	if torn {
		return nil, nil, e.EndWrites()
	}
	if j == nil || err != nil {
		return nil, nil, err
	}
	restore, push := j.By == "restore", j.By == "push"
	moved := true
	if restore {
		// a restore killed before its commit moved the ref owes nothing,
		// and had put no file in place (its renames come after its
		// commit): it is undone, as if never asked
		head, err := e.Head()
		if err != nil {
			return nil, nil, err
		}
		moved = head != j.From
	}
	// A sync (or restore) killed during its writes left temp files beside
	// the files it owed (Checkouts): its new versions, or the file a swap
	// took out, an agent's save that landed right before it, which is
	// recorded first (removeLeftovers) and named.
	var owed []config.Kept
	for _, w := range j.Writes {
		if k, ok := e.cfg.Classify(w.Path); ok {
			owed = append(owed, k)
		}
	}
	found := e.removeLeftovers(owed, true)
	if !moved {
		return nil, nil, e.EndWrites()
	}
	head, files, err := e.recorded()
	if push {
		// owed for the head the push moved the ref to, wherever it is now
		head = j.To
		files, err = e.filesAt(j.To)
	}
	if err != nil {
		return nil, nil, err
	}
	refused := map[string]string{}
	for _, w := range j.Writes {
		k, ok := e.cfg.Classify(w.Path)
		if f, saved := found[w.Path]; ok && saved {
			notWritten = append(notWritten, NotWritten{Path: w.Path, Rev: head, Found: f.commit, FoundRejected: f.rejected, Restore: restore, Push: push})
			continue // what is on disk is recorded next, over the edit found
		}
		if !ok || files[w.Path] != w.Result || w.Ours == w.Result {
			continue // not kept here, or the ref does not hold the merged version
		}
		written, err := e.checkout(k, w.Ours, w.Result)
		var unreadable *state.Problem
		if errors.As(err, &unreadable) {
			// not a readable regular file any more (or its folder a link
			// out of the work tree): left alone, named, and the version
			// noted as not taken, so a file absent once that is gone is
			// no deletion (attack33b F4)
			notWritten = append(notWritten, NotWritten{Path: w.Path, Rev: head, NotTaken: w.Result != "", Restore: restore, Push: push})
			if w.Result != "" {
				refused[w.Path] = w.Result
			}
			continue
		}
		if err != nil {
			return notWritten, nil, fmt.Errorf("%s journal: %s: %w", j.writer(), w.Path, err)
		}
		if written {
			continue
		}
		if done, err := e.onDiskIs(k, w.Result); err == nil && done {
			continue // the killed sync had written it already (attack19-crash 2)
		}
		// edited since: that edit is newer and will be recorded, over
		// the merged version (merged with it first where the class's
		// merge keeps both sides, MergeOverEdits), which the user is told
		// of
		notWritten = append(notWritten, NotWritten{Path: w.Path, Rev: head, Ours: w.Ours, Result: w.Result, Restore: restore, Push: push})
	}
	if len(refused) > 0 {
		if err := e.KeepNotTaken(refused); err != nil {
			return notWritten, nil, fmt.Errorf("%s journal: %w", j.writer(), err)
		}
	}
	// the merges of edits over owed MEMORY.md or graph versions, kept
	// before the journal that owed them goes
	e.OweMerges(notWritten)
	if push {
		// the files are now those of the head the push moved the ref to
		if err := e.store.MarkMatched(j.To); err != nil {
			return notWritten, nil, fmt.Errorf("push journal: %w", err)
		}
	}
	if len(j.Lost) > 0 && head != j.From {
		if err := e.KeepLosses(j.Lost); err != nil {
			return notWritten, nil, fmt.Errorf("sync journal: %w", err)
		}
		lost = j.Lost
	}
	return notWritten, lost, e.EndWrites()
}

// recoverWrites is RecoverWrites for a command that is not a sync: the
// writes it leaves undone are kept for TakeNotWritten to name. With
// mergeOver (a caller holding the write-phase lock shared: record), an
// edit of a MEMORY.md or graph made after the sync was killed is merged
// with the sync's merged version first (MergeOverEdits).
func (e *Engine) recoverWrites(mergeOver bool) error {
	nw, _, err := e.RecoverWrites()
	if mergeOver && err == nil {
		nw = e.MergeOverEdits(nw)
	}
	e.noteNotWritten(nw...)
	return err
}

// noteNotWritten keeps nw for TakeNotWritten to name.
func (e *Engine) noteNotWritten(nw ...NotWritten) {
	if len(nw) == 0 {
		return
	}
	e.nwMu.Lock()
	e.notWritten = append(e.notWritten, nw...)
	e.nwMu.Unlock()
}

// NotWritten is a write an interrupted sync owed that completing its
// journal left undone: the file was edited (or replaced by something not a
// regular file) after the sync was interrupted. The edit is newer and is
// recorded over the merged version, which Rev (the merge) holds.
//
// With Found set, the sync had written the file, and an edit saved right
// before its swap was found in the temp file the swap put it at (the sync
// was killed before it swapped it back): Found is the commit that
// recorded that edit (on the rejected ref when FoundRejected), over the
// merged version; what is on disk is recorded next, over that edit.
type NotWritten struct {
	Path          string
	Rev           string
	Found         string
	FoundRejected bool
	// Ours and Result are the versions (blob ids) the sync's merge started
	// from and wrote; Merged, the commit that recorded the edit merged
	// again with Result (MergeOverEdits), when it was.
	Ours, Result string
	Merged       string
	// Dropped names what of a graph's edits that merge could not keep
	// (a relation to an entity the other side deleted).
	Dropped []string
	// Later is set when the edit was invalid: the merge is made by the
	// record that finds the file fixed (MergeOverEdits); with Unended, when
	// a line was still being appended to it: made once the line ends, or
	// UnendedWait after.
	Later, Unended bool
	// NotTaken is set when the file could not be written (not a regular
	// file, its folder a link out of the work tree): the merged version is
	// noted as not taken (KeepNotTaken), so its absence is no deletion.
	NotTaken bool
	// Restore is set when the writes were a restore's (its commit, Rev,
	// records the restored version), not a sync's; Push when they were
	// owed for a push into this repository (pushed.go).
	Restore bool
	Push    bool
}

// Interrupted names the command whose journal owed the write: "an
// interrupted sync" or "an interrupted restore".
func (n NotWritten) Interrupted() string {
	switch {
	case n.Restore:
		return "an interrupted restore"
	case n.Push:
		return "a push into this repository"
	}
	return "an interrupted sync"
}

// Owed names the version that was owed: "the merged version" (a sync's)
// or "the restored version".
func (n NotWritten) Owed() string {
	switch {
	case n.Restore:
		return "the restored version"
	case n.Push:
		return "the pushed version"
	}
	return "the merged version"
}

// TakeNotWritten returns the writes left undone by the journals this
// engine's records completed since the last call, for the command to name
// (a sync reports those of the journals it completes itself).
func (e *Engine) TakeNotWritten() []NotWritten {
	e.nwMu.Lock()
	defer e.nwMu.Unlock()
	out := e.notWritten
	e.notWritten = nil
	return out
}

// PendingWrites lists the paths a killed sync still owes the work tree:
// its journal is there, the state ref moved to the merged version, and
// the file still holds the version the merge replaced, so until the next
// record or sync completes the journal (RecoverWrites) it looks like a
// local edit undoing the merge. None when no sync was interrupted. It
// changes nothing.
func (e *Engine) PendingWrites() ([]string, error) {
	owed, err := e.owedWrites()
	return slices.Sorted(maps.Keys(owed)), err
}

// InterruptedWriter names the command a journal left behind is of:
// "restore" or "sync" (the default, also when there is none).
func (e *Engine) InterruptedWriter() string {
	j, _, _ := e.readJournal()
	if j == nil {
		return "sync"
	}
	return j.writer()
}

// owedWrites is PendingWrites with the version each path is owed: path ->
// the journal's Result (a blob id, "" for a removal).
func (e *Engine) owedWrites() (map[string]string, error) {
	j, _, err := e.readJournal()
	if j == nil || err != nil {
		return nil, err
	}
	head, files, err := e.recorded()
	if err != nil || head == j.From {
		return nil, err
	}
	out := map[string]string{}
	for _, w := range j.Writes {
		k, ok := e.cfg.Classify(w.Path)
		if !ok || files[w.Path] != w.Result || w.Ours == w.Result {
			continue
		}
		if still, err := e.onDiskIs(k, w.Ours); err == nil && still {
			out[w.Path] = w.Result
		}
	}
	return out, nil
}
