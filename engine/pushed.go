package engine

import (
	"errors"
	"maps"
	"slices"

	"github.com/strata-dev/strata/state"
)

// A push into this repository (it serves as another machine's sync remote
// while strata keeps its work tree too) moves refs/strata/state without
// writing the work tree: the files stay at the version the ref moved from,
// and the next record took each file the push changed for the user's edit
// back, and each file it added for a deletion, reverting the pushed work
// on every machine (attack38e). git logs such a move in the ref's reflog,
// which strata keeps, with the message "push" (strata's own moves say
// "strata"). So before it records anything, a record (the watcher's, a
// hook's, a sync's) takes that move first, as a fast-forward sync takes the
// other machine's versions: each kept file the move changed that is still
// the version the ref moved from gets the new version, written through the
// journal (a crash is completed by the next command), and a file edited
// since is left as edited (recorded over it, named, as after an
// interrupted sync). A version this machine would not take from a sync is
// not written either: one that fails its schema, is over max_size, or, for
// Claude Code's settings files and .mcp.json, changes what Claude Code
// runs here; the file on disk is then recorded next, as this machine's
// version, as a sync keeps it local. The move is then marked taken: a
// reflog entry of strata's at the same head.

// pushedMove returns the state ref's newest move when git receive-pack made
// it (a push into this repository) and the ref is still where it put it.
func (e *Engine) pushedMove() (from, to string, ok bool) {
	old, nw, msg, ok := e.store.LastMove(e.store.StateRef())
	if !ok || msg != "push" || old == nw {
		return "", "", false
	}
	if head, err := e.Head(); err != nil || head != nw.String() {
		return "", "", false
	}
	from = old.String()
	if old.IsZero() {
		from = ""
	}
	return from, nw.String(), true
}

// takePush writes the work tree as a push into this repository left it
// owed (see above), holding the write-phase lock exclusively; the caller
// holds no write-phase lock. The files it writes and those it does not
// take are kept for TakePushed.
func (e *Engine) takePush() error {
	if _, _, ok := e.pushedMove(); !ok {
		return nil
	}
	release, err := e.HoldWrites()
	if err != nil {
		return err
	}
	defer release()
	if err := e.recoverWrites(false); err != nil {
		return err
	}
	from, to, ok := e.pushedMove() // another process may have taken it meanwhile
	if !ok {
		return nil
	}
	before := map[string]string{}
	if from != "" {
		if before, err = e.store.Files(from); err != nil {
			return err
		}
	}
	after, err := e.store.Files(to)
	if err != nil {
		return err
	}
	var owed []JournalEntry
	var refused []Pushed
	paths := slices.Sorted(maps.Keys(after))
	for p := range before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		if before[p] == after[p] {
			continue
		}
		k, ok := e.cfg.Classify(p)
		if !ok || OutsideTree(p) {
			continue
		}
		if why := e.pushRefused(k, before[p], after[p], to); why != "" {
			refused = append(refused, Pushed{Path: p, Refused: why})
			continue
		}
		owed = append(owed, JournalEntry{Path: p, Ours: before[p], Result: after[p]})
	}
	var written []Pushed
	if len(owed) > 0 {
		if err := e.beginJournal(journal{Writes: owed, From: from, By: "push"}, "nothing written"); err != nil {
			return err
		}
		nw, _, err := e.RecoverWrites()
		if err != nil {
			return err
		}
		left := map[string]bool{}
		for _, n := range nw {
			left[n.Path] = true
		}
		e.noteNotWritten(nw...)
		for _, w := range owed {
			if !left[w.Path] {
				written = append(written, Pushed{Path: w.Path, Deleted: w.Result == ""})
			}
		}
	}
	e.store.MarkMoveTaken(e.store.StateRef(), to)
	e.nwMu.Lock()
	e.pushed = append(append(e.pushed, written...), refused...)
	e.nwMu.Unlock()
	return nil
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
// here (or Deleted), or Refused, with why.
type Pushed struct {
	Path    string
	Deleted bool
	Refused string
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
