package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// A Batch with Keep set links each file it replaces into the directory
// Keep, right before the rename, so that the rename does not free the old
// file: freeing it is left to Sweep, run later off the caller's path. The
// reason is the disk: a file system that hands freed blocks back to the
// device at once (ext4 without a journal, mounted with discard) makes the
// rename that frees a file wait for the device, 50–750 µs a file on the
// disk strata is measured on, where the rename alone takes ~25 µs.
//
// Nothing depends on the links for correctness. The old file is a version
// the caller no longer needs (a sync records every edit before it replaces
// a file), so any process may remove any link in Keep at any time: removed
// before the rename, it only means the rename frees the file itself. Where
// a link cannot be made (Keep on another file system, a file system without
// hard links, Keep missing or not a directory), the batch stops trying and
// renames as before.

// keepLink links p's target's current file into b.Keep. The first failure
// that would repeat turns keeping off for the rest of the batch.
func (b *Batch) keepLink(p batchFile) {
	if b.Keep == "" || b.keepOff {
		return
	}
	if b.keepID == "" {
		kd, err := openKeepDir(b.Keep)
		if err != nil {
			b.keepOff = true
			return
		}
		b.keepDir = kd
		var r [6]byte
		rand.Read(r[:])
		b.keepID = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:]) + "-"
	}
	b.keepSeq++
	err := p.d.linkInto(p.base, b.keepDir, b.keepID+strconv.Itoa(b.keepSeq))
	switch {
	case err == nil:
		b.kept++
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrNotExist) && keepDirOK(b.Keep):
		// this file gone meanwhile (or a name taken): the next may link
	default:
		// EXDEV, EPERM (no hard links here), Keep removed, EMLINK,
		// ENOSPC...: rename as before
		b.keepOff = true
	}
}

// keepDirOK reports whether dir is a real directory (not a symbolic link to
// one): links are made only where the caller put them.
func keepDirOK(dir string) bool {
	st, err := os.Lstat(dir)
	return err == nil && st.IsDir()
}

// HasKept reports whether dir, a Batch's Keep, holds anything for Sweep.
// dir is read only when it is a real directory (no pipe is ever opened).
func HasKept(dir string) bool {
	if !keepDirOK(dir) {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// Sweep removes what a Batch kept in dir (see Batch.Keep): every entry
// that is not a directory. It returns how many it removed and the first
// error other than an entry already gone (another Sweep took it). A
// missing dir is nothing to sweep.
func Sweep(dir string) (int, error) {
	if !keepDirOK(dir) {
		return 0, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		switch err := os.Remove(filepath.Join(dir, e.Name())); {
		case err == nil:
			n++
		case errors.Is(err, fs.ErrNotExist):
		case first == nil:
			first = err
		}
	}
	return n, first
}
