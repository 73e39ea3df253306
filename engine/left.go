package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-dev/strata/atomicfile"
)

// A sync leaves a kept file as it is when the remote's version is one git
// put in another machine's work tree (that machine's checked-out commit
// held it: a checkout, a stash, a reset, a pull there) and the file here
// holds an edit of this machine (syncer decides). A branch switch over
// there is not an edit of the workflow here. The state ref still takes the
// merged version, as the other machine's does, so the two refs agree and
// nothing is merged back and forth; the work tree keeps the edit, which is
// recorded already. The file sync-left.json remembers each such path: the
// version left in place (Work) and the ref's version beside it (Ref). While
// both stand, the file is not an unrecorded edit (record, status, restore
// see it as recorded); once either moves on, the entry no longer counts.

// LeftEntry is one kept file a sync left in place.
type LeftEntry struct {
	Path string `json:"path"`
	Work string `json:"work"` // the version left in the work tree (a blob id)
	Ref  string `json:"ref"`  // the state ref's version beside it
}

func (e *Engine) leftFile() string {
	return filepath.Join(e.store.GitDir(), "strata", "sync-left.json")
}

// leftPlaces maps each path a sync left in place, while its entry stands,
// to the version left there.
type leftPlaces map[string]string

// is reports whether id is the version a sync left in place at path.
func (l leftPlaces) is(path, id string) bool {
	w, ok := l[path]
	return ok && w == id
}

func (e *Engine) readLeft() ([]LeftEntry, error) {
	data, err := os.ReadFile(e.leftFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var es []LeftEntry
	if err := json.Unmarshal(data, &es); err != nil {
		return nil, fmt.Errorf("%s: %w", e.leftFile(), err)
	}
	return es, nil
}

// leftHere returns the entries that still stand against the recorded
// snapshot files (the state ref's head): the ref still holds Ref. An
// unreadable file counts as none (each path is then an edit to record, as
// before any sync left it: nothing is lost).
func (e *Engine) leftHere(files map[string]string) leftPlaces {
	return e.leftStanding(func(path string) string { return files[path] })
}

// LeftAt returns, for each path a sync left in place whose entry stands
// against commit (the state ref's head a merge starts from), the version
// left in the work tree.
func (e *Engine) LeftAt(commit string) map[string]string {
	return e.leftStanding(func(path string) string {
		id, _ := e.store.BlobID(commit, path)
		return id
	})
}

func (e *Engine) leftStanding(recorded func(path string) string) leftPlaces {
	if e.display != "" {
		return nil // the home view's one file is never git's
	}
	es, err := e.readLeft()
	if err != nil {
		return nil
	}
	var out leftPlaces
	for _, l := range es {
		if l.Ref != "" && recorded(l.Path) == l.Ref {
			if out == nil {
				out = leftPlaces{}
			}
			out[l.Path] = l.Work
		}
	}
	return out
}

// LeaveInPlace durably notes, before the state ref moves to a merge that
// holds each entry's Ref, that the work tree keeps its Work. An entry for
// the same path replaces the old one. (An entry the ref has moved past no
// longer counts, and goes with the next one for its path.)
func (e *Engine) LeaveInPlace(add []LeftEntry) error {
	if len(add) == 0 {
		return nil
	}
	old, err := e.readLeft()
	if err != nil {
		old = nil // unreadable: rewritten whole
	}
	gone := map[string]bool{}
	for _, l := range add {
		gone[l.Path] = true
	}
	var es []LeftEntry
	for _, l := range old {
		if !gone[l.Path] {
			es = append(es, l)
		}
	}
	es = append(es, add...)
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
	name := e.leftFile()
	data, err := json.Marshal(es)
	if err != nil {
		return err
	}
	sh := e.store.Shared()
	if err := sh.MkdirAll(filepath.Dir(name)); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := atomicfile.Write(name, data, sh.Mode(0o644)); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// LeavesInPlace reports whether a sync should leave the kept file at p as
// it is rather than write the merged version. It does when the merge takes
// the remote's version (whole, or merged with the local one: a line a
// checkout removed there is no deletion here), that version is one the
// other machine's checked-out commit held when it was recorded
// (p.TheirsHead), and the
// local version (local: p.Ours, or the version an earlier sync left in
// place) is either an edit made here (the local checked-out commit does not
// hold it) or the version git checked out here while the other machine's
// commit is not ahead of it (an older commit or another branch: a branch
// switch over there is no step here). A version the other machine
// committed on top of this branch is written, as is a deletion.
func (e *Engine) LeavesInPlace(p MergePath, local string) bool {
	if p.TheirsHead == "" || p.Result == "" || p.Result == p.Ours || local == "" || local == p.Result {
		return false
	}
	return !e.CheckedOutBlob(local, p.Path) || !e.store.HeadBehind(p.TheirsHead)
}
