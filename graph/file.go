package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/internal/proc"
	"github.com/strata-dev/strata/state"
)

// ErrUnavailable is wrapped by every error of Upsert and Remove: the graph
// file could not be read or replaced (a read-only directory, a directory or
// a symbolic link in its place, a lock held too long, a file that kept
// changing). Callers go on with L1 only and say so once with DegradedWarning.
var ErrUnavailable = errors.New("L3 unavailable")

// DegradedWarning is the one line callers print when L3 cannot be written.
const DegradedWarning = "L3 unavailable — degraded mode (L1 only)"

// Timing of the sharing protocol. Variables so tests can shorten them.
var (
	maxAttempts = 50                     // read-edit-replace rounds before giving up
	lockWait    = 5 * time.Second        // longest wait for <file>.lock or a server write in flight
	lockStale   = 10 * time.Second       // a lock or server temp file older than this is a crash leftover
	settle      = 100 * time.Millisecond // after a write, how long a server write that read the old file may take to land
	poll        = 2 * time.Millisecond
)

// File is a graph file as strata edits it: Name is where it is written
// (its lock folder, temp file and replace are beside it, each relative to
// its folder opened once per edit and judged where it really is, see
// update); Tree and Rel,
// when Tree.Root is set, are the door its content is read through
// (state.Tree.ReadFileMode): every read of the version an edit is based on
// resolves Rel beneath the work tree at that read and judges the real
// folder it found the file in. A folder swapped for a symbolic link out of
// the tree after the caller's checks (engine.WriteOwn) is then refused
// (state.ErrOutside), never read, edited and written back (attack25 K1).
// Without a Tree the file is read by Name.
//
// Max, when above 0, is the largest file an edit reads (max_size): a file
// over it is neither read, edited nor written (a *TooLargeError, so
// ErrUnavailable). strata records no version over max_size, so an edit of
// such a file would replace a version no ref holds with another no ref
// holds, at the cost of parsing and rewriting all of it at every agent step
// (attack35b H2: 10 s a step at 11 MB, 94 s and 608 MB at 86 MB).
type File struct {
	Name string
	Tree state.Tree
	Rel  string
	Max  int64
}

// TooLargeError is a graph file over File.Max: nothing of it was read,
// nothing written. Size is 0 when the file grew past Max while it was read.
// Edited: the file is within Max, but strata's edit would take it past
// (Size): nothing was written. It matches state.ErrTooLarge.
type TooLargeError struct {
	Size, Max int64
	Edited    bool
}

func (e *TooLargeError) Error() string {
	if e.Edited {
		return fmt.Sprintf("strata's edit would make it %d bytes, larger than max_size %d; left unchanged", e.Size, e.Max)
	}
	if e.Size == 0 {
		return fmt.Sprintf("file grew past max_size %d while read; strata neither edits nor records it", e.Max)
	}
	return fmt.Sprintf("file is %d bytes, larger than max_size %d; strata neither edits nor records it", e.Size, e.Max)
}

// Is makes a *TooLargeError match state.ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == state.ErrTooLarge }

// Read reads a graph file. A missing file is an error wrapping
// fs.ErrNotExist; a symbolic link is not followed.
func Read(path string) (*Graph, error) {
	data, exists, _, err := File{Name: path}.read(nil)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fs.ErrNotExist}
	}
	return Parse(data), nil
}

// Upsert replaces (or adds) these entities in the MCP JSONL file at path,
// keeping every other line byte for byte, atomically; it returns whether the
// file changed. A missing file (and its directory) is created.
//
// The file is shared with the memory server, which takes no lock and
// replaces the whole file (temp file + rename) on every tool call. So Upsert
// holds <path>.lock (a directory, taken with mkdir as newer server builds and
// proper-lockfile do) while it works; waits while a server temp file
// (<base>.<hex>.tmp) shows a server write in flight; re-reads the file just
// before replacing it and starts over if it changed; replaces it with an
// atomic exchange where the file system has one, so a server write that
// still slipped in is caught and built upon (also one written in place,
// fs.writeFile's way, into the file displaced within a settle time of the
// exchange, see settled); and returns only once the file
// has held its entities unchanged for a settle time (100 ms), writing again
// if a server write based on the old file removed them. A server write that
// lands in the microseconds between the last re-read and the exchange on a
// file system without exchange can still be lost: without a lock on the
// server's side no protocol closes that window. Every error wraps
// ErrUnavailable. It is idempotent.
//
// Only the first line of an entity's name is edited (upsertLines): later
// lines of the name keep their bytes. An entity whose first line has an
// observations member that is not an array is not written: the file gets
// the other entities, and the error (not wrapping ErrUnavailable) joins an
// *ObservationsError per such entity, naming the file, line and column.
func Upsert(path string, entities []Entity) (changed bool, err error) {
	return File{Name: path}.Upsert(entities)
}

// Upsert is the package's Upsert of the file f.
func (f File) Upsert(entities []Entity) (changed bool, err error) {
	return f.update(func(d []byte) ([]byte, bool, error) { return upsertLines(d, entities) })
}

// UpsertRemove is Upsert of entities and Remove of the entity lines named
// remove, in one write under the same protocol (the L1 documents strata
// mirrors, some of them cleared).
func UpsertRemove(path string, entities []Entity, remove []string) (changed bool, err error) {
	return File{Name: path}.UpsertRemove(entities, remove)
}

// UpsertRemove is the package's UpsertRemove of the file f.
func (f File) UpsertRemove(entities []Entity, remove []string) (changed bool, err error) {
	gone := map[string]string{}
	return f.update(func(d []byte) ([]byte, bool, error) { return upsertRemove(d, entities, remove, gone) })
}

// Remove deletes the first entity line of each of the names (strata's; a
// later line of a name is the memory server's and stays), with the same
// protocol as Upsert. Removing what Upsert added gives back the file's bytes.
func Remove(path string, names ...string) (changed bool, err error) {
	return File{Name: path}.Remove(names...)
}

// Remove is the package's Remove of the file f.
func (f File) Remove(names ...string) (changed bool, err error) {
	gone := map[string]string{}
	return f.update(func(d []byte) ([]byte, bool, error) {
		out, changed := removeLines(d, names, gone)
		return out, changed, nil
	})
}

// update runs edit on the file's content under the sharing protocol. The
// error of edit's last run (the entities it refused) is returned as it is,
// once the rest is written.
func (f File) update(edit func([]byte) ([]byte, bool, error)) (changed bool, err error) {
	path := f.Name
	var refused error
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w: %s: %w", ErrUnavailable, path, err)
			return
		}
		for _, e := range unjoin(refused) {
			if oe := (*ObservationsError)(nil); errors.As(e, &oe) && oe.Path == "" {
				oe.Path = path
			}
		}
		err = refused
	}()
	// Every write (the lock folder, the temp file, the exchange or rename)
	// is made relative to the file's folder, opened once and judged where
	// it really is (in the tree, not in a .git directory): a folder swapped
	// for a symbolic link out of the tree after the judgement is never
	// written through (attack25-recheck N6).
	if err := atomicfile.MkdirAll(filepath.Dir(path), 0o755, f.mkdirOK); err != nil {
		return false, unwrapPath(err)
	}
	d, err := atomicfile.OpenDir(filepath.Dir(path), f.dirOK)
	if err != nil {
		return false, unwrapPath(err)
	}
	defer d.Close()
	base := filepath.Base(path)
	step("lock")
	release, err := lock(d, base)
	if err != nil {
		return false, err
	}
	defer release()

	var pending []byte // a version our replace displaced; our edit of it must go in
	hasPending, wrote := false, false
	var seen []byte    // the content last seen holding our entities
	var written []byte // what the last replace put there
	quiet := false
	for attempt := 0; attempt < maxAttempts; attempt++ {
		waitServer(d, base)
		step("read")
		cur, _, mode, err := f.read(d)
		if err != nil {
			return changed, err
		}
		if bytes.HasPrefix(cur, []byte("\xEF\xBB\xBF")) {
			// the server, parsing each line as JSON, cannot load the file;
			// nor can strata tell its first entity line (validate says so)
			return changed, errors.New("a byte order mark starts the file (the memory server cannot load it; remove its first 3 bytes)")
		}
		if err := notGraph(cur); err != nil {
			return changed, err
		}
		var next []byte
		need, putBack := false, false
		switch {
		case hasPending && f.Max > 0 && int64(len(pending)) > f.Max:
			// A server write our replace displaced, over max_size: it is
			// put back as it is, not edited, and the next read refuses it.
			next, need, putBack = pending, true, true
		case !hasPending && wrote && bytes.Equal(cur, written):
			// the file is still what this edit wrote: editing it again
			// changes nothing (each edit is idempotent) and would parse the
			// whole file once more for each settle round
		default:
			from := cur
			if hasPending {
				from = pending
			}
			var rerr error
			next, need, rerr = edit(from)
			refused = rerr
		}
		if !need && !hasPending {
			// After a write, return only once the file has held our
			// entities, unchanged, for a settle time: a server write that
			// read the old file lands within it, and we write again.
			if !wrote || (quiet && bytes.Equal(cur, seen)) {
				return changed, nil
			}
			seen, quiet = cur, true
			time.Sleep(settle)
			continue
		}
		quiet = false
		if f.Max > 0 && int64(len(next)) > f.Max && !putBack {
			// a version strata would not record: not written. A server
			// write our replace displaced is put back as it is, and the
			// next round finds the edit of it too large.
			if !hasPending {
				return changed, &TooLargeError{Size: int64(len(next)), Max: f.Max, Edited: true}
			}
			next, putBack = pending, true
		}
		step("temp")
		tmp, err := d.WriteTemp(base, next, mode)
		if err != nil {
			return changed, unwrapPath(err)
		}
		waitServer(d, base)
		step("reread")
		now, _, _, err := f.read(d)
		if err != nil {
			d.Remove(tmp)
			return changed, err
		}
		if !bytes.Equal(now, cur) { // changed meanwhile: start over on the new content
			d.Remove(tmp)
			hasPending = false
			continue
		}
		step("replace")
		displaced, exchanged, err := f.replace(d, tmp)
		if errors.Is(err, fs.ErrExist) { // created meanwhile
			d.Remove(tmp)
			continue
		}
		if err != nil {
			d.Remove(tmp)
			return changed, unwrapPath(err)
		}
		d.Sync()
		changed, wrote, hasPending, written = true, true, false, next
		if putBack {
			written = nil // not our edit: the next round edits it
		}
		if exchanged && !bytes.Equal(displaced, cur) {
			pending, hasPending = displaced, true // a server write landed just before ours
		}
	}
	return changed, fmt.Errorf("the file kept changing during %d attempts", maxAttempts)
}

// notGraph is why content is not a graph file strata may edit: a line
// that is not a JSON object. The memory server parses each non-empty line
// as one JSON object and cannot load such a file; and a file that is
// something else (a shell script, pretty-printed JSON, a YAML file, a note
// that the graph moved) is never written into, whatever names it the
// graph file (attack23-hostile F1): update checks every version it is about
// to edit, so nothing is appended to it. nil for an empty file.
func notGraph(data []byte) error {
	for n, rest := 1, data; len(rest) > 0; n++ {
		text, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		t := bytes.TrimSpace(text)
		if len(t) == 0 {
			continue
		}
		if t[0] != '{' || !json.Valid(t) {
			return fmt.Errorf("line %d is not a JSON object: not an MCP memory graph file, left unchanged", n)
		}
	}
	return nil
}

// unjoin lists the errors errors.Join joined (err alone otherwise).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// beforeRead, when set by a test, runs before each read of the file's
// content: where a racing process swaps a folder, after the caller's
// checks.
var beforeRead func()

// writeStep, when set by a test, runs at each step of update: "lock"
// (before the lock folder is made), "read", "temp" (before the temp file
// is written), "reread", "replace" (before the exchange or rename) and
// "unlock": where a racing process swaps the folder after its judgement.
var writeStep func(step string)

func step(name string) {
	if writeStep != nil {
		writeStep(name)
	}
}

// dirOK judges the file's folder, opened for update's writes, where it
// really is: as the door judges a folder it reads in. Without a door,
// anywhere.
func (f File) dirOK(_, real string) error {
	if f.Tree.Root == "" {
		return nil
	}
	return f.Tree.JudgeDir(real)
}

// mkdirOK judges the nearest existing folder of the file's, in which its
// missing folders are made: dirOK's judgement, but a folder above the
// tree's root (not made yet) is fine, the root being made below it.
func (f File) mkdirOK(real string) error {
	if f.Tree.Root == "" {
		return nil
	}
	if rb := f.Tree.Real; rb != "" && state.Within(real, rb) {
		return nil
	}
	return f.Tree.JudgeDir(real)
}

// read reads the file: a regular file, a symbolic link at its name never
// followed; through f's door when it has one. d is its folder, as update
// opened it. A missing file gives exists false and mode atomicfile.Default
// (it is created 0666 less the umask).
func (f File) read(d *atomicfile.Dir) (data []byte, exists bool, mode fs.FileMode, err error) {
	var st fs.FileInfo
	if d != nil {
		st, err = d.Lstat(filepath.Base(f.Name))
	} else {
		st, err = os.Lstat(f.Name)
	} // the early word on what is there; the read decides
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, atomicfile.Default, nil
	case err != nil:
		return nil, false, 0, unwrapPath(err)
	case st.Mode()&fs.ModeSymlink != 0:
		return nil, false, 0, errors.New("is a symbolic link; not followed")
	case st.IsDir():
		return nil, false, 0, errors.New("is a directory")
	case !st.Mode().IsRegular():
		return nil, false, 0, errors.New("not a regular file")
	case f.Max > 0 && st.Size() > f.Max:
		return nil, false, 0, &TooLargeError{Size: st.Size(), Max: f.Max}
	}
	if beforeRead != nil {
		beforeRead()
	}
	if f.Tree.Root != "" {
		return f.readBeneath(f.Rel)
	}
	data, exists, err = readByName(f.Name, f.Max)
	return data, exists, st.Mode().Perm(), err
}

// readBeneath reads rel (the file, or a temp file beside it) through the
// door: resolved beneath the tree, its real folder judged.
func (f File) readBeneath(rel string) (data []byte, exists bool, mode fs.FileMode, err error) {
	data, mode, err = f.Tree.ReadFileMode(rel, f.Max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, atomicfile.Default, nil
	case errors.Is(err, state.ErrNotRegular): // swapped since the Lstat
		return nil, false, 0, errors.New("not a regular file")
	case errors.Is(err, state.ErrTooLarge): // grew since the Lstat
		return nil, false, 0, &TooLargeError{Max: f.Max}
	case err != nil:
		return nil, false, 0, unwrapPath(err)
	}
	return data, true, mode, nil
}

// readByName reads the regular file path, not following a link at its
// name, for a File without a door: at most max bytes when max is above 0.
func readByName(path string, max int64) (data []byte, exists bool, err error) {
	data, err = state.ReadRegular(path, max, false)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, state.ErrNotRegular): // swapped since the Lstat
		return nil, false, errors.New("not a regular file")
	case errors.Is(err, state.ErrTooLarge): // grew since the Lstat
		return nil, false, &TooLargeError{Max: max}
	case err != nil:
		return nil, false, unwrapPath(err)
	}
	return data, true, nil
}

// replace moves tmp over the file. Where the file system can exchange the
// two atomically, it does, and returns the displaced content (exchanged
// true), read at tmp through f's door when it has one (content an edit is
// based on next); otherwise it renames. A missing file is created without
// replacing one that appeared meanwhile (an error wrapping fs.ErrExist)
// where supported.
// All in d, the file's folder as update opened it; tmp is a base name.
func (f File) replace(d *atomicfile.Dir, tmp string) (displaced []byte, exchanged bool, err error) {
	base := filepath.Base(f.Name)
	err = d.Exchange(tmp, base)
	switch {
	case err == nil:
		displaced, rerr := settled(f.tempReader(d, tmp))
		d.Remove(tmp)
		return displaced, rerr == nil, nil
	case errors.Is(err, fs.ErrNotExist):
		// no file yet: created without replacing one that appeared
		// meanwhile (an error wrapping fs.ErrExist)
		return nil, false, d.RenameNew(tmp, base)
	case errors.Is(err, atomicfile.ErrNoExchange):
		return nil, false, d.Rename(tmp, base)
	}
	return nil, false, err
}

// displacedSettle is how long the file an exchange displaced is watched,
// at the temp name, for writes into it (see settled).
var displacedSettle = 20 * time.Millisecond

// replaceStep, set by tests only, is called with "read" once replace has
// read the file it displaced the first time.
var replaceStep func(step string)

// settled reads the file an exchange displaced, now at tmp, and reads it
// again after displacedSettle, until two reads agree (at most ten times).
// A writer that opened the graph file before the exchange and writes after
// it (a memory server build that saves with fs.writeFile: truncate, then
// write) writes into that file: read at once, it may be empty or half
// written, and what lands after the read would be lost. A write landing
// later than that is lost with the file: no lock of the server's closes
// that window. The file is never followed if a link, nor opened blocking.
func settled(read func() ([]byte, error)) ([]byte, error) {
	prev, err := read()
	if err != nil {
		return nil, err
	}
	if replaceStep != nil {
		replaceStep("read")
	}
	for range 10 {
		time.Sleep(displacedSettle)
		now, err := read()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(now, prev) {
			break
		}
		prev = now
	}
	return prev, nil
}

// tempReader reads tmp, a temp file (base name) in d, the file's folder:
// through f's door when it has one, else by name.
func (f File) tempReader(d *atomicfile.Dir, tmp string) func() ([]byte, error) {
	if f.Tree.Root == "" {
		name := filepath.Join(d.Path(), tmp)
		return func() ([]byte, error) { return state.ReadRegular(name, 0, false) }
	}
	rel := path.Join(path.Dir(f.Rel), tmp)
	return func() ([]byte, error) { return f.Tree.ReadFile(rel, 0) }
}

// lock takes <base>.lock in d by mkdir, waiting while another holder has it. A
// lock older than lockStale is a crash leftover and is taken over. strata
// marks its own lock with an empty file naming its process id
// (strata-<pid>), so a lock a killed strata left is taken over at once,
// instead of failing every layer write for lockStale (attack19-crash 5).
// The lock folder, its mark and their removal are all relative to d.
func lock(d *atomicfile.Dir, base string) (release func(), err error) {
	name := base + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		err := d.Mkdir(name, 0o755)
		if err == nil {
			mark := holderPrefix + strconv.Itoa(os.Getpid())
			if sub, err := d.Sub(name); err == nil {
				sub.CreateEmpty(mark, 0o644)
				sub.Close()
			}
			return func() {
				step("unlock")
				removeIn(d, name, mark)
				d.Remove(name)
			}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock: %w", unwrapPath(err))
		}
		if mark, dead := deadHolder(d, name); dead {
			removeIn(d, name, mark)
			if d.Remove(name) == nil {
				continue
			}
		} else if st, serr := d.Lstat(name); serr == nil && time.Since(st.ModTime()) > lockStale && d.Remove(name) == nil {
			continue // an empty lock left by a crash: only an empty one, as git's and the server's
		}
		// A lock that cannot be taken over (a live strata's however old,
		// one holding files of another program) is waited for, up to
		// lockWait: never looped on without a pause (attack19 verify N5:
		// a stale lock holding a file spun at 100 % CPU for ever).
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is held by another writer", filepath.Join(d.Path(), name))
		}
		time.Sleep(poll)
	}
}

// holderPrefix starts the name of the file strata puts in a lock it holds.
const holderPrefix = "strata-"

// removeIn removes the file name in d's folder sub (not followed if a
// link).
func removeIn(d *atomicfile.Dir, sub, name string) {
	if s, err := d.Sub(sub); err == nil {
		s.Remove(name)
		s.Close()
	}
}

// deadHolder reports whether the lock directory name in d holds only
// strata's mark of a process no longer running (or running something
// other than strata now: its pid reused), and the mark's name.
func deadHolder(d *atomicfile.Dir, name string) (mark string, dead bool) {
	sub, err := d.Sub(name)
	if err != nil {
		return "", false
	}
	ents, err := sub.ReadDir()
	sub.Close()
	if err != nil || len(ents) != 1 {
		return "", false
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(ents[0].Name(), holderPrefix))
	if err != nil || !strings.HasPrefix(ents[0].Name(), holderPrefix) || pid <= 0 {
		return "", false
	}
	return ents[0].Name(), !proc.Running(pid) || !proc.MayRunStrata(pid)
}

// waitServer waits (bounded) while the server's temp file for base exists
// in d: it is between writing its new version and renaming it over base.
func waitServer(d *atomicfile.Dir, base string) {
	deadline := time.Now().Add(lockWait)
	for serverWriting(d, base) && time.Now().Before(deadline) {
		time.Sleep(poll)
	}
}

// serverWriting reports whether a fresh "<base>.<32 hex>.tmp" sits in d,
// the temp file the server's saveGraph renames over the graph.
func serverWriting(d *atomicfile.Dir, base string) bool {
	ents, err := d.ReadDir()
	if err != nil {
		return false
	}
	for _, e := range ents {
		mid, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		mid, ok = strings.CutSuffix(mid, ".tmp")
		if !ok || len(mid) != 32 || strings.Trim(mid, "0123456789abcdef") != "" {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) < lockStale {
			return true
		}
	}
	return false
}

// unwrapPath drops *PathError's operation and path (the caller names the
// file once), keeping the cause: "permission denied".
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
