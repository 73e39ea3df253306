package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
)

// The local versions past syncs did not take are kept until their path is
// recorded again, so `strata status` names them: one JSON file beside the
// store's other caches. A sync keeps its losses before it removes its
// journal, and the journal holds them too (journal.go), so a sync killed at
// any point still leaves them named: by the next command that completes the
// journal, and meanwhile by Losses, which reads a pending journal's.
type lossFile struct {
	Lost []keptLoss `json:"lost"`
}

type keptLoss struct {
	Lost
	Blob string `json:"blob"` // the path's version at the head the sync left; "" when absent
}

// lossPath is where the losses of this view's syncs are kept, as its sync
// journal is (journalPath): per work tree (a linked one syncs its own
// state ref) and apart for the home view, since each view reads an entry
// whose path its own ref does not hold as recorded again, and dropped it.
func (e *Engine) lossPath() string {
	name := "sync-lost.json"
	if e.display != "" {
		name = "sync-lost-home.json" // the home view's (home.go)
	}
	return filepath.Join(e.store.GitDir(), "strata", name)
}

// KeepLosses adds lost to the kept losses, once each (by path and commit),
// and drops those whose path was recorded again since.
func (e *Engine) KeepLosses(lost []Lost) error {
	old, err := e.readLosses()
	if err != nil {
		return err
	}
	if len(old) == 0 && len(lost) == 0 {
		return nil
	}
	_, files, err := e.recorded()
	if err != nil {
		return err
	}
	var keep []keptLoss
	for _, l := range old {
		if files[l.Path] == l.Blob {
			keep = append(keep, l)
		}
	}
	for _, l := range lost {
		if !slices.ContainsFunc(keep, func(k keptLoss) bool { return k.Path == l.Path && k.Rev == l.Rev }) {
			keep = append(keep, keptLoss{Lost: l, Blob: files[l.Path]})
		}
	}
	return e.writeLosses(keep)
}

// writeLosses replaces the kept losses with keep.
func (e *Engine) writeLosses(keep []keptLoss) error {
	data, err := json.MarshalIndent(lossFile{Lost: keep}, "", "  ")
	if err != nil {
		return err
	}
	file := e.lossPath()
	sh := e.store.Shared()
	if err := sh.MkdirAll(filepath.Dir(file)); err != nil {
		return err
	}
	return atomicfile.WriteFixed(file, append(data, '\n'), sh.FixFile)
}

func (e *Engine) readLosses() ([]keptLoss, error) {
	data, err := state.ReadRegular(e.lossPath(), 0, true)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f lossFile
	if json.Unmarshal(bytes.TrimSpace(data), &f) != nil {
		return nil, nil // a damaged cache only forgets old losses
	}
	return f.Lost, nil
}

// Losses lists the local versions that past syncs did not take and whose
// path has not been recorded since, for `strata status`; each comes back
// with `strata restore PATH --rev REV`. The losses of a sync killed after
// it moved the state ref, whose journal no command has completed yet, are
// among them.
func (e *Engine) Losses() ([]Lost, error) {
	kept, err := e.readLosses()
	if err != nil {
		return []Lost{}, err
	}
	pending, err := e.pendingLosses()
	if err != nil || len(kept) == 0 && len(pending) == 0 {
		return []Lost{}, err
	}
	_, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	out := []Lost{}
	for _, l := range kept {
		if files[l.Path] == l.Blob {
			out = append(out, l.Lost)
		}
	}
	for _, l := range pending {
		if !slices.ContainsFunc(out, func(k Lost) bool { return k.Path == l.Path && k.Rev == l.Rev }) {
			out = append(out, l)
		}
	}
	return out, nil
}
