package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

// A sync on a machine with no version of a kept file on disk that refuses
// the remote's version by its own rules (over its max_size, invalid by its
// schema, changing what Claude Code runs here) keeps that version in the
// merged tree — the shared state, which other machines take — and does not
// write it here (gitstore.MergePath.NotTaken, contract §9 step 4). The state
// ref then holds a version this work tree's file does not: without a note,
// the next record would read the missing file as a deletion and push it to
// every machine. The note is one JSON file per view beside the losses
// (lossPath), mapping each such path to the blob the ref held when the sync
// left it out; it counts only while the ref still holds that blob there and
// the file is still absent. Any other version recorded or merged at the path
// makes it void.
type notTakenFile struct {
	Paths map[string]string `json:"paths"`
}

// notTakenMeans is what a not-taken note that cannot be written costs: the
// sync stops before its merge moves the ref.
const notTakenMeans = "nothing was merged: without the note, the next record would take a file this sync left out of the work tree for deleted"

// notTakenPath is where this view's note is kept (per work tree, apart for
// the home view), as its losses are.
func (e *Engine) notTakenPath() string {
	name := "sync-not-taken.json"
	if e.display != "" {
		name = "sync-not-taken-home.json"
	}
	return filepath.Join(e.store.GitDir(), "strata", name)
}

// NotTaken returns the versions syncs kept in the state ref but did not
// write to this work tree, path to blob, for the files still absent: a
// file there now (strata restore wrote it, the user copied it back) is no
// longer "not taken" (attack33c C1: the note outlived the file, so a later
// deletion of it was hidden, and a sync took the present file for absent
// and wrote the other machine's next version over nothing, then recorded
// the old one back over it). A missing or damaged note is empty (a damaged
// note only forgets: the next record may then read such a file as
// deleted, as before the note existed).
func (e *Engine) NotTaken() map[string]string {
	nt := e.notTakenNoted()
	for p := range nt {
		if e.fileThere(p) {
			delete(nt, p)
		}
	}
	return nt
}

// fileThere reports whether a regular file stands at the kept path p: a
// folder, a named pipe or a symbolic link there is what kept a sync from
// writing the version (attack33b F4), not the file written since
// (attack33d D1: counted as there, it voided the note, and the folder's
// removal was recorded and pushed as a deletion nobody made).
func (e *Engine) fileThere(p string) bool {
	fi, err := os.Lstat(e.cfg.Abs(p))
	return err == nil && fi.Mode().IsRegular()
}

// voidNotTaken takes out of the note the paths of paths whose file is
// there (a regular file: fileThere): once present, a file's later absence
// is a deletion like any other.
// Record calls it, so the note never outlives the file strata saw.
func (e *Engine) voidNotTaken(paths []config.Kept) error {
	if len(e.notTakenNoted()) == 0 {
		return nil
	}
	return e.changeNote(func(noted map[string]string) (bool, error) {
		changed := false
		for _, k := range paths {
			if _, ok := noted[k.Path]; ok && e.fileThere(k.Path) {
				delete(noted, k.Path)
				changed = true
			}
		}
		return changed, nil
	})
}

// changeNote makes one change of the note under its lock (holdNote):
// change gets the note as written, edits it in place and says whether it
// changed it; only then is it written back (removed when empty).
func (e *Engine) changeNote(change func(noted map[string]string) (bool, error)) error {
	release, err := e.holdNote()
	if err != nil {
		return err
	}
	defer release()
	noted := e.notTakenNoted()
	if changed, err := change(noted); err != nil || !changed {
		return err
	}
	return e.writeNote(e.notTakenPath(), len(noted) == 0, notTakenFile{Paths: noted}, notTakenMeans)
}

// holdNote takes the lock every change of the note is made under (read,
// changed, written back): records hold the write-phase lock shared, so
// two of them (the watcher's and a hook's, restore's and the watcher's)
// each took a different entry out and the later write put back the one
// the other had taken out, and a deletion of that file never left the
// machine (attack33e E2).
func (e *Engine) holdNote() (release func(), err error) {
	release, err = pidlock.Hold(e.notTakenPath()+".lock", e.store.Shared(), true, WritesWait)
	if held := (*pidlock.HeldError)(nil); errors.As(err, &held) {
		return nil, fmt.Errorf("the not-taken note is being changed (%s held for %s); try again: %w", held.Path, WritesWait, state.ErrLocked)
	}
	return release, err
}

// notTakenUnreadable says why the note cannot be read when something
// stands at its name that is not a note (damaged: not JSON, a folder, a
// named pipe, a symbolic link); "" when it is absent or reads. Such a note
// names no versions, and every absent kept file could be one a sync did
// not write here: record then records no deletion (judge), rather than
// push one to every machine (attack33e E1).
func (e *Engine) notTakenUnreadable() string {
	_, why := e.readNotTaken()
	return why
}

// NotTakenDamaged says why the not-taken note cannot be read ("" when it
// is absent or reads): while it cannot, record takes no absent kept file
// for deleted (status names it).
func (e *Engine) NotTakenDamaged() string {
	why := e.notTakenUnreadable()
	if why == "" {
		return ""
	}
	return state.ShownPath(e.notTakenPath()) + ": " + why
}

// notTakenNoted is the note as written, whether the files are there or not;
// empty when there is none or it cannot be read (notTakenUnreadable).
func (e *Engine) notTakenNoted() map[string]string {
	noted, _ := e.readNotTaken()
	return noted
}

// readNotTaken reads the note: its paths, or, when something stands at its
// name that is not a note, why not (with no paths). The one reader of both
// notTakenNoted and notTakenUnreadable, so what one counts as the note the
// other never calls damaged: a symbolic link at the name was followed by
// the one and refused by the other. strata writes the note as a regular
// file by rename (writeNote), so a link there is not one of its notes: it
// is not followed (nothing outside .git/strata is read as the note) and
// reads as damaged; the next note written replaces the link, not what it
// names.
func (e *Engine) readNotTaken() (map[string]string, string) {
	data, err := state.ReadRegular(e.notTakenPath(), 0, false)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, ""
	}
	if err != nil {
		return map[string]string{}, err.Error()
	}
	var f notTakenFile
	if err := json.Unmarshal(bytes.TrimSpace(data), &f); err != nil {
		return map[string]string{}, "not the JSON strata writes: " + err.Error()
	}
	if f.Paths == nil {
		return map[string]string{}, ""
	}
	return f.Paths, ""
}

// notTakenHere reports whether a kept file absent on disk is absent because
// a sync did not take the version blob the state ref holds at path: no
// deletion to record, nothing modified.
//
// Its callers found no file at path, so the note as written is asked
// directly: NotTaken's look at every noted file's place (an lstat each)
// would, for a record of N absent not-taken files, be N² lstats.
func (e *Engine) notTakenHere(path, blob string) bool {
	return blob != "" && e.notTakenNoted()[path] == blob
}

// NotTakenAt reports whether the kept file at path is absent here because
// a sync did not take the version the state ref holds there (status's
// `not taken`): a file made there now would be recorded over that version,
// replacing it on every machine (attack28-recheck2: memory add created a
// fresh MEMORY.md over the other machine's).
func (e *Engine) NotTakenAt(path string) bool {
	_, files, err := e.recorded()
	if err != nil {
		return false
	}
	if _, err := os.Lstat(e.cfg.Abs(path)); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	return e.notTakenHere(path, files[path])
}

// KeepNotTaken notes the versions of add (path to blob) as kept in the
// state ref and not written here, keeping the earlier notes the ref still
// holds as they were (files: the ref's head snapshot, before the merge that
// adds these moves it). It is written before that merge moves the ref, so a
// crash in between leaves at most a note the ref does not match (void).
func (e *Engine) KeepNotTaken(add map[string]string) error {
	if len(add) == 0 && len(e.NotTaken()) == 0 {
		return nil
	}
	return e.changeNote(func(noted map[string]string) (bool, error) {
		_, files, err := e.recorded()
		if err != nil {
			return false, err
		}
		for p, b := range noted { // kept: still absent (NotTaken), and still the ref's
			if e.fileThere(p) || files[p] != b {
				delete(noted, p)
			}
		}
		for p, b := range add {
			noted[p] = b
		}
		return true, nil
	})
}

// writeNote writes one of sync's notes in the git directory (the
// not-taken note, the withheld one) as indented JSON, atomically, or
// removes it when empty is set: no note left behind that says nothing.
// A note it cannot write is a *NoteError saying so, with means (what the
// missing note costs) and, when something the rename cannot replace stands
// at its name (a folder), what that is and how to clear it: the rename's
// "file exists" named only a temp file.
func (e *Engine) writeNote(file string, empty bool, note any, means string) error {
	st, err := os.Lstat(file)
	if err == nil && st.IsDir() {
		if empty {
			return nil // read as no note: nothing to remove
		}
		return &NoteError{Path: file, Means: means, Stands: "a folder"}
	}
	if empty {
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return &NoteError{Path: file, Means: means, Err: err}
		}
		return nil
	}
	data, err := json.MarshalIndent(note, "", "  ")
	if err != nil {
		return err
	}
	sh := e.store.Shared()
	if err := sh.MkdirAll(filepath.Dir(file)); err != nil {
		return &NoteError{Path: file, Means: means, Err: err}
	}
	if err := atomicfile.WriteFixed(file, append(data, '\n'), sh.FixFile); err != nil {
		return &NoteError{Path: file, Means: means, Err: err}
	}
	return nil
}

// NoteError is one of sync's notes in the git directory that could not be
// written: Stands names what stands at its name (a folder) when that is
// why, Err the failure otherwise; Means is what the missing note costs.
type NoteError struct {
	Path   string
	Stands string
	Means  string
	Err    error
}

func (e *NoteError) Error() string {
	why := "not written"
	if e.Stands != "" {
		why += " (" + e.Stands + " stands there; remove it, then sync again: rm -r " + state.ShellWord(e.Path) + ")"
	} else if e.Err != nil {
		first, _, _ := strings.Cut(e.Err.Error(), "\n")
		why += " (" + first + ")"
	}
	return state.ShownPath(e.Path) + ": " + why + ": " + e.Means
}

func (e *NoteError) Unwrap() error { return e.Err }
