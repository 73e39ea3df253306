package engine

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// A strata process killed while it replaces a kept file leaves a temp file
// beside it (atomicfile.Leftover): the new version a batch of checkouts (a
// sync's, a restore's) or a Put never renamed into place; or the file a
// replace swapped out, or a removal moved aside, before it looked at it.
// That last file may be an agent's save that landed right before the swap
// and is nowhere else: removing every leftover, as strata did, deleted it.
// So a leftover is removed only when its content is safe: in the object
// store (every version strata writes is there before its temp file is: a
// recorded version, a merge's result, or a Put's, stored first), or empty.
// Any other is first recorded as a version of the kept file it was for, as
// any edit (on the rejected ref when invalid), then removed; one that
// cannot be recorded (over max_size, unreadable, its file not found among
// the kept ones, or outside the work tree) is left where it is.

// foundLeftover is a leftover removeLeftovers recorded: the commit on the
// state ref, or on the rejected ref when rejected.
type foundLeftover struct {
	commit   string
	rejected bool
}

// removeLeftovers removes, from the directory of each kept file given, the
// temp files of strata processes no longer running, recording first those
// whose content is not safe (see above): only strata's own temp files, of
// processes no longer running, and only in a directory strata may write in
// (inside). A leftover is for one of the kept files given in its
// directory, else for the file its name carries when a rule keeps it.
// held says the caller holds the write-phase lock and has completed the
// journal (RecoverWrites), so recording takes neither again. It returns
// the leftovers it recorded, by kept path (the last, when several were for
// one file).
func (e *Engine) removeLeftovers(ks []config.Kept, held bool) map[string]foundLeftover {
	byDir := map[string][]config.Kept{}
	var dirs []string
	for _, k := range ks {
		dir := filepath.Dir(e.cfg.Abs(k.Path))
		if _, ok := byDir[dir]; !ok {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], k)
	}
	var found map[string]foundLeftover
	for _, dir := range dirs {
		if e.inside(byDir[dir][0]) != nil {
			continue // one folder, one answer
		}
		for _, l := range e.unsavedLeftovers(dir) {
			k, ok := e.leftoverOf(l.Leftover, byDir[dir])
			if !ok {
				continue // no kept file to record it as: left as it is
			}
			f, ok := e.recordLeftover(k, l, held)
			if !ok || f.commit == "" {
				continue
			}
			if found == nil {
				found = map[string]foundLeftover{}
			}
			found[k.Path] = f
		}
	}
	return found
}

// unsaved is a leftover whose content no object is: read, to be recorded.
type unsaved struct {
	atomicfile.Leftover
	data []byte
	st   os.FileInfo // as read: what the removal compares with
}

// unsavedLeftovers removes the leftovers in dir whose content is safe and
// returns the others it could read within max_size, oldest first.
func (e *Engine) unsavedLeftovers(dir string) []unsaved {
	var out []unsaved
	for _, l := range atomicfile.Leftovers(dir) {
		st, err := os.Lstat(l.Path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if rel := e.cfg.Rel(e.cfg.Root, l.Path); rel != "" {
			if _, err := e.store.BlobID("HEAD", rel); err == nil {
				continue // a file git tracks, named like strata's: not strata's (attack19 verify N1)
			}
		}
		data, err := state.ReadRegular(l.Path, e.cfg.MaxSize, false)
		if err != nil {
			continue // unreadable or too large: never removed unsaved
		}
		if len(data) == 0 || e.store.HasBlob(gitstore.BlobHash(data)) {
			removeSame(l.Path, st)
			continue
		}
		out = append(out, unsaved{l, data, st})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].st.ModTime().Before(out[j].st.ModTime()) })
	return out
}

// leftoverOf finds the kept file l was for: among ks (the kept files of
// its directory), else the file its name carries whole when a rule keeps
// it. Files outside the work tree are not looked for: the home ref's
// record reads the file on disk, never a leftover's content.
func (e *Engine) leftoverOf(l atomicfile.Leftover, ks []config.Kept) (config.Kept, bool) {
	for _, k := range ks {
		if l.For(path.Base(k.Path)) {
			return k, !OutsideTree(k.Path)
		}
	}
	if len(ks) == 0 || l.Target() == "" || OutsideTree(ks[0].Path) {
		return config.Kept{}, false
	}
	return e.cfg.Classify(path.Join(path.Dir(ks[0].Path), l.Target()))
}

// recordLeftover records l's content as a version of k (on the rejected
// ref when invalid) and removes l once its content is in the store.
func (e *Engine) recordLeftover(k config.Kept, l unsaved, held bool) (foundLeftover, bool) {
	var outs []Outcome
	var err error
	if held {
		outs, err = e.recordHeld([]config.Kept{k}, state.SourceRecord, map[string][]byte{k.Path: l.data}, nil, recordMode{})
	} else {
		outs, err = e.recordOver([]config.Kept{k}, state.SourceRecord, map[string][]byte{k.Path: l.data}, nil, false)
	}
	if err != nil || len(outs) == 0 || !e.store.HasBlob(gitstore.BlobHash(l.data)) {
		return foundLeftover{}, false
	}
	removeSame(l.Path, l.st)
	var f foundLeftover
	switch o := outs[0]; {
	case o.Entry != nil:
		f.commit = o.Entry.Commit
	case o.Rejected != nil:
		f.commit, f.rejected = o.Rejected.Commit, true
	}
	return f, true
}

// removeSame removes name when it is still the file st describes.
func removeSame(name string, st os.FileInfo) {
	if now, err := os.Lstat(name); err == nil && os.SameFile(st, now) {
		os.Remove(name)
	}
}

// removeOwnLeftovers removes the temp files that strata processes no
// longer running left in strata's own folders of the git directory
// (<gitdir>/strata, and <commondir>/strata of a linked work tree, and
// the path index's folder): a process killed between writing one of its
// files there (the sync journal, sync-not-taken.json, gitrules-head, an
// index rewritten whole, ...) to a temp name and renaming it. Those hold strata's own metadata, never a user's save,
// and are all written again when needed: removed without a look, as
// atomicfile.Leftovers tells them (Prefix, a pid that runs no more).
func (e *Engine) removeOwnLeftovers() {
	dirs := []string{filepath.Join(e.store.GitDir(), "strata")}
	if common := filepath.Join(e.store.CommonDir(), "strata"); common != dirs[0] {
		dirs = append(dirs, common)
	}
	dirs = append(dirs, filepath.Join(e.store.CommonDir(), "strata", "index")) // the path index's rewrites
	for _, dir := range dirs {
		for _, l := range atomicfile.Leftovers(dir) {
			if st, err := os.Lstat(l.Path); err == nil && st.Mode().IsRegular() {
				removeSame(l.Path, st)
			}
		}
	}
}

// YoungForeignLeftovers lists, by kept path, the temp files beside the kept
// files of this work tree that a strata process of another pid namespace (a
// devcontainer sharing the repository) wrote less than
// atomicfile.ForeignLeftoverAge ago: its live sync or restore, or a killed
// one's, which may hold an agent's save its swap took out. No record takes
// them until they are that old (removeLeftovers); status and doctor name
// them meanwhile (attack38c M2c: the save was out of its file for 10
// minutes with no word).
func (e *Engine) YoungForeignLeftovers() (map[string][]string, error) {
	ks, err := e.AllPaths()
	if err != nil {
		return nil, err
	}
	byDir := map[string][]config.Kept{}
	for _, k := range ks {
		if OutsideTree(k.Path) {
			continue
		}
		dir := filepath.Dir(e.cfg.Abs(k.Path))
		byDir[dir] = append(byDir[dir], k)
	}
	var out map[string][]string
	for dir, kept := range byDir {
		for _, l := range atomicfile.YoungForeign(dir) {
			k, ok := e.leftoverOf(l, kept)
			if !ok {
				continue
			}
			if out == nil {
				out = map[string][]string{}
			}
			out[k.Path] = append(out[k.Path], e.cfg.Rel(e.cfg.Root, l.Path))
		}
	}
	return out, nil
}

// YoungForeignWhy says what a temp file YoungForeignLeftovers lists is,
// and what becomes of it.
func YoungForeignWhy() string {
	return fmt.Sprintf("written by a strata process of another pid namespace (a container sharing this repository) less than %s ago: its sync or restore is under way, or it was killed and the temp file may hold a save that is not in the file yet; the first record once it is %s old records what it holds and removes it", atomicfile.ForeignLeftoverAge, atomicfile.ForeignLeftoverAge)
}
