package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// Checkouts is Checkout for many files at once, made durable in one pass
// (atomicfile.Batch): each Add checks the file on disk and writes the new
// version to a temp file beside it; Commit fsyncs the temp files together,
// renames them into place and fsyncs each directory once. A sync writing
// 1 000 files pays for the disk once instead of 1 000 times. Removals are
// done at Add, as Checkout does them. The directory Add checks (inside) is
// the one written in: the batch judges each directory it opens by where it
// really is (insideReal), at Add and again at Commit, and writes through
// the open directory, so a folder swapped meanwhile for a symbolic link
// into .git or out of the work tree is never written through. The caller keeps the sync journal
// until Commit returns, so a crash in between is completed by
// RecoverWrites.
type Checkouts struct {
	e     *Engine
	batch atomicfile.Batch
	added []checkoutFile
	dirs  map[string]bool        // directories known to exist
	kept  map[string]config.Kept // a kept file of each directory written in, for its check
	// untouched holds the paths Commit left unwritten though their file
	// is still the one Add saw (Interfered)
	untouched map[string]bool
}

type checkoutFile struct {
	path string
	name string
	st   os.FileInfo // the file as Add saw it; nil when absent
}

// Checkouts starts a batch of checkouts.
func (e *Engine) Checkouts() *Checkouts {
	c := &Checkouts{e: e, kept: map[string]config.Kept{}}
	c.batch.DirOK = func(dir, real string) error {
		k, ok := c.kept[dir]
		if !ok {
			return fmt.Errorf("%s: not a directory of a kept file", dir)
		}
		return e.insideReal(k, real)
	}
	return c
}

// Expect announces, before the first Add, how many files the batch will
// write, so a large one is made durable in one pass over the file system
// (atomicfile.Batch.Expect).
func (c *Checkouts) Expect(n int) { c.batch.Expect(n) }

// Add is Checkout of k to blob ("" removes the file) unless the file is no
// longer the version expect: it returns false, writing nothing. A written
// version reaches k's path at Commit. data, when not nil, is blob's content
// as the caller already read it (a sync's check reads every version it
// takes); it is used only when it hashes to blob, else the blob is read.
func (c *Checkouts) Add(k config.Kept, expect, blob string, data []byte) (bool, error) {
	e := c.e
	if err := e.inside(k); err != nil {
		return false, &state.Problem{Path: k.Path, Message: strings.TrimPrefix(err.Error(), k.Path+": ")}
	}
	name := e.cfg.Abs(k.Path)
	st, err := os.Lstat(name)
	absent := errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
	switch {
	case absent && expect != "":
		return false, nil // removed meanwhile: not the version the merge started from
	case absent:
		st = nil
	default:
		// present (or not even stat-able): the full check of what is there
		if same, err := e.onDiskIs(k, expect); !same || err != nil {
			return false, err
		}
		if err != nil { // the Lstat above, though the file read
			return false, fmt.Errorf("write %s: %w", k.Path, err)
		}
		// st, taken before the content was read, is what Commit compares
		// with: a change in between counts as an edit made meanwhile.
	}
	if blob == "" {
		return e.removeUnchanged(k, st)
	}
	if data == nil || gitstore.BlobHash(data) != blob {
		if data, err = e.Blob(blob); err != nil {
			return false, err
		}
	}
	switch {
	case st != nil && !st.Mode().IsRegular():
		return false, &PathError{Path: k.Path, Reason: notWritable(st.Mode()), IO: true}
	case st == nil:
		if dir := filepath.Dir(name); !c.dirs[dir] {
			if err := c.e.mkdirs(k, dir); err != nil {
				return false, err
			}
			if c.dirs == nil {
				c.dirs = map[string]bool{}
			}
			c.dirs[dir] = true
		}
	}
	mode := atomicfile.Default // a new file: 0666 less the umask, as git checkout makes it
	if st != nil {
		mode = st.Mode().Perm()
	}
	add := c.batch.Add
	if st == nil {
		add = c.batch.AddNew // created only if nothing appears there meanwhile
	}
	if _, ok := c.kept[filepath.Dir(name)]; !ok {
		c.kept[filepath.Dir(name)] = k
	}
	if err := add(name, data, mode); err != nil {
		var pe *PathError
		if errors.As(err, &pe) { // its directory, refused as inside refuses it
			return false, &state.Problem{Path: pe.Path, Message: strings.TrimPrefix(pe.Error(), pe.Path+": ")}
		}
		return false, fmt.Errorf("write %s: %w", k.Path, err)
	}
	c.added = append(c.added, checkoutFile{path: k.Path, name: name, st: st})
	return true, nil
}

// Commit puts every added version in place, durably. A file changed on disk
// since its Add (size, time or inode differ), checked right before its new
// version would replace it, is not replaced, nor is a file that appeared
// where Add found none, up to the moment the new one would take its place,
// nor a file whose directory was swapped or moved since Add (see
// Checkouts): its path is returned among late, as Checkout would have
// returned false for it. The checks and renames are made holding the lock
// every strata writer takes for them (lockWrites), so a Put in another
// process never slips between a check and its rename. mid, when not nil, is
// called halfway through putting the files in place (crash tests).
func (c *Checkouts) Commit(mid func()) (late []string, err error) {
	added := make(map[string]checkoutFile, len(c.added))
	replaced := false
	for _, a := range c.added {
		added[a.name] = a
		replaced = replaced || a.st != nil
	}
	c.batch.Unchanged = func(name string, now os.FileInfo) bool {
		return unchangedSince(added[name].st, now)
	}
	if replaced {
		c.batch.Keep = c.e.freedDir(true)
	}
	unlock, err := c.e.lockWrites()
	if err != nil {
		c.batch.Abort()
		return nil, fmt.Errorf("write: %w", err)
	}
	notWritten, err := c.batch.Commit(mid)
	unlock()
	for _, name := range notWritten {
		a := added[name]
		late = append(late, a.path)
		if now, serr := os.Lstat(name); a.st != nil && serr == nil && unchangedSince(a.st, now) {
			if c.untouched == nil {
				c.untouched = map[string]bool{}
			}
			c.untouched[a.path] = true
		}
	}
	if err != nil {
		return late, fmt.Errorf("write: %w", err)
	}
	return late, nil
}

// Changed returns the kept paths added to the batch whose file is no
// longer the one Add saw (a file there where Add found none counts), by
// size, time and inode, as Commit judges each right before its rename, in
// one pass over the batch. A restore asks before its commit records the
// new versions (putBack).
func (c *Checkouts) Changed() map[string]bool {
	changed := map[string]bool{}
	for _, a := range c.added {
		now, err := os.Lstat(a.name)
		if a.st == nil && err == nil || a.st != nil && (err != nil || !unchangedSince(a.st, now)) {
			changed[a.path] = true
		}
	}
	return changed
}

// Interfered reports whether Commit left path unwritten though its file was
// still the one Add saw: not an edit of the user's, but what the batch made
// for it (its temp file, its folder) changed by another process meanwhile
// (atomicfile refuses to put such a file in place). Nothing was written,
// and nothing is there to record next.
func (c *Checkouts) Interfered(path string) bool { return c.untouched[path] }

// freedDir is where a batch of checkouts links the files it replaces, so
// that freeing them is left to SweepFreed, off the sync's path
// (atomicfile.Batch.Keep): <common dir>/strata/freed. With create, it is
// created when missing; "" when it cannot be.
func (e *Engine) freedDir(create bool) string {
	dir := filepath.Join(e.store.CommonDir(), "strata", "freed")
	if create {
		if err := e.store.Shared().MkdirAllMode(dir, 0o700); err != nil {
			return ""
		}
	}
	return dir
}

// HasFreed reports whether the freed directory holds anything to sweep.
func (e *Engine) HasFreed() bool { return atomicfile.HasKept(e.freedDir(false)) }

// SweepFreed removes the replaced files that batches of checkouts left in
// the freed directory and returns how many. Any process may sweep at any
// time: nothing there is needed (see atomicfile.Batch.Keep).
func (e *Engine) SweepFreed() (int, error) { return atomicfile.Sweep(e.freedDir(false)) }

// Abort removes the temp files of versions not yet in place.
func (c *Checkouts) Abort() { c.batch.Abort() }
