package engine

import (
	"errors"
	"maps"
	"slices"

	"github.com/strata-dev/strata/state"
)

// A push into this repository (it serves as another machine's sync remote
// while strata keeps its work tree too), or any other move of the state ref
// by something that is not strata (git update-ref by hand), leaves the files
// at the version the ref moved from: the next record took each file the
// move changed for the user's edit back, and each file it added for a
// deletion, reverting the pushed work on every machine (attack38e). strata
// keeps the heads of its own last move of the ref (gitstore.Matched), and
// its ref moves refuse to start from any other (*gitstore.OutsideMoveError).
// So a record (the watcher's, a hook's), a sync, a restore and forget first
// take every such move since (takePush), as a fast-forward sync takes the
// other machine's versions: each kept file that changed between the head
// the files follow and the ref's head, and is still the version of the
// first, gets the version of the second, written through the journal (By
// "push": a crash is completed by the next command); a file edited since is
// left as edited (recorded over it, named; a MEMORY.md or graph merged
// with it); a file already at the new version is left alone. A version this
// machine would not take from a sync is not written either: one that fails
// its schema, is over max_size, or, for Claude Code's settings files and
// .mcp.json, changes what Claude Code runs here; the file on disk is then
// recorded next, as this machine's version (a new file that is absent here
// stays absent, noted as not taken, so its absence is no deletion). A move
// that is no fast-forward of the head the files follow (a forced push, a
// rewind by hand) writes nothing: the files here are recorded over it, and
// the user is told the head the files followed. Each move taken is then
// marked (gitstore.MarkMatched), and a push that landed meanwhile is taken
// next, from there: every push is taken, however many piled up (attack38f
// F1), and one landing during a record makes its ref move refuse, so the
// record takes it and is made again (F2).

// outsideMove returns, when something other than strata moved the state
// ref since strata's own last move, the head the work tree's files follow
// (from, "" for none) and the ref's head (to), and whether to descends from
// from (a fast-forward: its changes can be taken). ok is false when the ref
// is where strata left it, or nothing is known.
func (e *Engine) outsideMove() (from, to string, forward, ok bool, err error) {
	mFrom, mTo, known := e.store.Matched()
	if !known || e.display != "" {
		return "", "", false, false, nil
	}
	head, err := e.Head()
	if err != nil || head == mTo || head == mFrom {
		return "", "", false, false, err
	}
	if head == "" {
		return mTo, "", false, true, nil // deleted from outside: nothing to take
	}
	for _, c := range []string{mTo, mFrom} {
		if c == "" {
			continue
		}
		if ahead, _, err := e.store.Compare(c, head); err == nil && ahead == 0 {
			return c, head, true, true, nil
		}
	}
	if mTo == "" && mFrom == "" {
		return "", head, true, true, nil // strata's last move was to nothing
	}
	return mTo, head, false, true, nil
}

// TakePush takes the state ref's moves by something other than strata
// into the work tree (see above) before a command that moves the ref
// itself (sync, restore, forget; Record calls it too). The files it wrote,
// left or did not take are kept for TakePushed.
func (e *Engine) TakePush() error { return e.takePush() }

// takePush is TakePush; it holds the write-phase lock exclusively, and its
// caller holds none.
func (e *Engine) takePush() error {
	if e.writesHeld.Load() > 0 {
		return nil // a caller holds the write-phase lock: its ref move refuses, and the outer record comes back here
	}
	if _, _, _, ok, err := e.outsideMove(); !ok || err != nil {
		return err
	}
	release, err := e.HoldWrites()
	if err != nil {
		return err
	}
	defer release()
	if err := e.recoverWrites(false); err != nil {
		return err
	}
	for range maxPushRounds {
		from, to, forward, ok, err := e.outsideMove()
		if err != nil || !ok {
			return err
		}
		if !forward {
			e.notePushed(Pushed{Forced: true, From: from, To: to})
			if err := e.store.MarkMatched(to); err != nil {
				return err
			}
			continue
		}
		if err := e.takeForward(from, to); err != nil {
			return err
		}
	}
	return nil // still moving: the record's ref move refuses, and it comes back here
}

// maxPushRounds bounds the moves one takePush takes in turn while pushes
// keep landing.
const maxPushRounds = 8

// takeForward takes the fast-forward move from from to to (takePush).
func (e *Engine) takeForward(from, to string) error {
	before, err := e.filesAt(from)
	if err != nil {
		return err
	}
	after, err := e.filesAt(to)
	if err != nil {
		return err
	}
	var owed []JournalEntry
	var refused []Pushed
	notTaken := map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(mergedKeys(before, after))) {
		if before[p] == after[p] {
			continue
		}
		k, ok := e.cfg.Classify(p)
		if !ok || OutsideTree(p) {
			continue
		}
		if done, err := e.onDiskIs(k, after[p]); err == nil && done {
			continue // already the new version (strata wrote it, or a move of its own went unnoted)
		}
		if why := e.pushRefused(k, before[p], after[p], to); why != "" {
			refused = append(refused, Pushed{Path: p, Refused: why, New: before[p] == ""})
			if before[p] == "" && !e.fileThere(p) {
				notTaken[p] = after[p] // absent here: no deletion to record
			}
			continue
		}
		owed = append(owed, JournalEntry{Path: p, Ours: before[p], Result: after[p]})
	}
	if len(notTaken) > 0 {
		if err := e.KeepNotTaken(notTaken); err != nil {
			return err
		}
	}
	e.notePushed(refused...)
	if len(owed) == 0 {
		return e.store.MarkMatched(to)
	}
	if err := e.beginJournal(journal{Writes: owed, From: from, To: to, By: "push"}, "nothing written"); err != nil {
		return err
	}
	nw, _, err := e.RecoverWrites() // writes, marks to taken, ends the journal
	if err != nil {
		return err
	}
	left := map[string]bool{}
	for _, n := range nw {
		left[n.Path] = true
	}
	e.noteNotWritten(nw...)
	var written []Pushed
	for _, w := range owed {
		if !left[w.Path] {
			written = append(written, Pushed{Path: w.Path, Deleted: w.Result == ""})
		}
	}
	e.notePushed(written...)
	return nil
}

// filesAt is the snapshot of commit ("" for none: empty).
func (e *Engine) filesAt(commit string) (map[string]string, error) {
	if commit == "" {
		return map[string]string{}, nil
	}
	return e.store.Files(commit)
}

func (e *Engine) notePushed(p ...Pushed) {
	e.nwMu.Lock()
	e.pushed = append(e.pushed, p...)
	e.nwMu.Unlock()
}

// pushRefused says why a version a push brought is not written here, as a
// sync would not take it (""  when it is written): its schema, max_size,
// or what Claude Code runs.
func (e *Engine) pushRefused(k Kept, was, blob, commit string) string {
	var data []byte
	if blob != "" {
		var err error
		if data, err = e.Blob(blob); err != nil {
			var big *TooLargeError
			if errors.As(err, &big) {
				return "its version is over max_size here"
			}
			return "its version cannot be read: " + err.Error()
		}
		if ps := e.v.ValidateAs(k.Path, data, k.Schema, k.Format); ps.Invalid() {
			return "its version is invalid here: " + ps[0].Message
		}
	}
	if whole, ok := ClaudeRuns(k.Path); ok {
		var cur []byte
		if was != "" {
			var err error
			if cur, err = e.Blob(was); err != nil {
				return "its version here cannot be read: " + err.Error()
			}
		}
		if changed := ChangesWhatRuns(cur, data, whole); len(changed) > 0 {
			return "its version changes what Claude Code runs (" + ShownChanges(changed) + "), and is not taken without you: read it (strata show " + state.ShellWord(k.Path) + " --rev " + commit + "), then take it if you trust it (strata restore " + state.ShellWord(k.Path) + " --rev " + commit + ")"
		}
	}
	return ""
}

// Pushed is a file a push into this repository changed (takePush): written
// here (or Deleted), or Refused, with why; or a Forced move.
type Pushed struct {
	Path    string
	Deleted bool
	Refused string
	New     bool // Refused: a file the push added, absent here (noted as not taken)
	// Forced is a move that is no fast-forward of the head the files
	// followed (From): nothing of it written, the files here recorded
	// over it.
	Forced   bool
	From, To string
}

// Message says what was done with p, for the command's stderr or the
// watcher's log.
func (p Pushed) Message() string {
	const by = "a push into this repository (another machine's sync, or git update-ref)"
	switch {
	case p.Forced && p.To == "":
		return "refs/strata/state was deleted from outside strata (the files here followed " + state.ShortID(p.From) + "): nothing of it is written here, and the files here are recorded again from scratch"
	case p.Forced:
		return "refs/strata/state was moved from outside strata to " + state.ShortID(p.To) + ", which does not descend from " + state.ShortID(p.From) + ", the history the files here follow (a forced push, or a rewind by hand): nothing of it is written here, and the files here are recorded over it; the history before stays in git's objects (strata show PATH --rev " + state.ShortID(p.From) + ")"
	case p.Refused != "" && p.New:
		return "not written " + state.ShownPath(p.Path) + ": " + by + " added a version not taken here (" + p.Refused + "); it stays in refs/strata/state, absent here (status: not taken)"
	case p.Refused != "":
		return "kept " + state.ShownPath(p.Path) + " as it is here: " + by + " brought a version not taken here (" + p.Refused + "); this machine's version is recorded next"
	case p.Deleted:
		return "deleted " + state.ShownPath(p.Path) + ": " + by + " removed it from refs/strata/state"
	}
	return "wrote " + state.ShownPath(p.Path) + ": " + by + " moved refs/strata/state, and its version is written here"
}

// TakePushed returns the files the records of this engine wrote, or did
// not take, for pushes into this repository since the last call, for the
// command to name.
func (e *Engine) TakePushed() []Pushed {
	e.nwMu.Lock()
	defer e.nwMu.Unlock()
	out := e.pushed
	e.pushed = nil
	return out
}

// PendingPushInfo is a move of the state ref from outside strata not yet
// taken into the work tree (PendingPush), for status and doctor.
type PendingPushInfo struct {
	From    string   `json:"from"`    // the head the files here follow
	To      string   `json:"to"`      // the ref's head
	Forward bool     `json:"forward"` // a fast-forward: its files are written by the next command
	Paths   []string `json:"paths,omitempty"`
}

// PendingPush returns the move of the state ref by something other than
// strata that no command has taken yet (nil when none), with the kept files
// it changed that are still the version the files here follow: the next
// record, sync, restore or forget writes them. It changes nothing.
func (e *Engine) PendingPush() (*PendingPushInfo, error) {
	from, to, forward, ok, err := e.outsideMove()
	if err != nil || !ok {
		return nil, err
	}
	info := &PendingPushInfo{From: from, To: to, Forward: forward}
	if !forward {
		return info, nil
	}
	before, err := e.filesAt(from)
	if err != nil {
		return nil, err
	}
	after, err := e.filesAt(to)
	if err != nil {
		return nil, err
	}
	for p := range mergedKeys(before, after) {
		if before[p] == after[p] {
			continue
		}
		k, ok := e.cfg.Classify(p)
		if !ok || OutsideTree(p) {
			continue
		}
		if done, err := e.onDiskIs(k, after[p]); err == nil && done {
			continue
		}
		if was, err := e.onDiskIs(k, before[p]); err == nil && was {
			info.Paths = append(info.Paths, p)
		}
	}
	slices.Sort(info.Paths)
	return info, nil
}

// mergedKeys is the keys of a and b, once each.
func mergedKeys(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for p := range a {
		out[p] = true
	}
	for p := range b {
		out[p] = true
	}
	return out
}
