//go:build !linux

package atomicfile

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// dir is a directory a Batch writes in. Here its files are reached by
// their paths, each time: the check (Batch.DirOK) is of the path resolved
// at Add and again at Commit, not of the directory each step reaches.
type dir struct {
	path string
	dirState
}

func openDir(path string) (*dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	return &dir{path: path}, nil
}

func openKeepDir(path string) (*dir, error) {
	if !keepDirOK(path) {
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	return &dir{path: path}, nil
}

func (d *dir) realPath() (string, error) { return filepath.EvalSymlinks(d.path) }

func (d *dir) isAt(string) bool { return true }

func (d *dir) create(tmp string, mode fs.FileMode) (*os.File, error) {
	return os.OpenFile(filepath.Join(d.path, tmp), os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
}

// ownTemp opens the temp file tmp of d when it is still made, the regular
// file made as made says (by path here: a swap between the check and the
// open is not seen).
func (d *dir) ownTemp(tmp string, made fs.FileInfo) (*os.File, bool) {
	name := filepath.Join(d.path, tmp)
	if st, err := os.Lstat(name); made == nil || err != nil || !st.Mode().IsRegular() || !sameMade(st, made) {
		return nil, false
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	return f, true
}

func (d *dir) rename(tmp, base string) error {
	return os.Rename(filepath.Join(d.path, tmp), filepath.Join(d.path, base))
}

func (d *dir) renameNew(tmp, base string) error {
	return renameNew(filepath.Join(d.path, tmp), filepath.Join(d.path, base))
}

// exchange cannot swap two files here: Commit renames as before.
func (d *dir) exchange(a, b string) error { return errNoExchange }

// held is nothing here: no file is ever swapped back (see exchange).
type held struct{}

func (d *dir) hold(string) (held, error) { return held{}, nil }
func (h held) is(fs.FileInfo) bool       { return false }
func (h held) held() bool                { return false }
func (h held) release()                  {}

func (d *dir) lstat(base string) (fs.FileInfo, error) { return os.Lstat(filepath.Join(d.path, base)) }

func (d *dir) remove(name string) error { return os.Remove(filepath.Join(d.path, name)) }

func (d *dir) linkInto(base string, to *dir, name string) error {
	return os.Link(filepath.Join(d.path, base), filepath.Join(to.path, name))
}

func (d *dir) sync() { SyncDir(d.path) }

func (d *dir) close() {}

// Nothing is held open here: no directory is ever closed for another.
func (d *dir) spare()        {}
func (d *dir) reopen() error { return nil }
func (d *dir) isOpen() bool  { return true }
func dirMax() int            { return math.MaxInt }
func groupMax() int          { return syncGroup }

// SameFile is os.SameFile.
func SameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

// MkdirAll makes path's missing directories (os.MkdirAll), once ok has
// judged where the nearest one that exists really is. Here the directories
// are made by path: a folder swapped for a link after the check is
// followed (Linux makes them through a checked handle).
func MkdirAll(path string, perm fs.FileMode, ok func(real string) error) error {
	p := filepath.Clean(path)
	for {
		if _, err := os.Stat(p); err == nil {
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	if ok != nil && p != filepath.Clean(path) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		if err := ok(real); err != nil {
			return err
		}
	}
	return os.MkdirAll(path, perm)
}

// openAppend is not made here: Append's callers replace the file instead.
func (d *dir) openAppend(string) (*os.File, error) { return nil, ErrNoAppend }

func isLoop(error) bool { return false }

func links(fs.FileInfo) uint64 { return 1 }

// errIsDir is never os.Remove's error: it removes an empty directory.
var errIsDir = errors.New("is a directory")

func (d *dir) rmdir(name string) error { return os.Remove(filepath.Join(d.path, name)) }

func (d *dir) mkdir(name string, perm fs.FileMode) error {
	return os.Mkdir(filepath.Join(d.path, name), perm)
}

func (d *dir) sub(name string) (*dir, error) {
	p := filepath.Join(d.path, name)
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &os.PathError{Op: "open", Path: p, Err: errNotDir}
	}
	return &dir{path: p}, nil
}

func (d *dir) readDir() ([]fs.DirEntry, error) { return os.ReadDir(d.path) }

// changeTime is fi's modification time here, in nanoseconds (the inode
// change time is not read on this system).
func changeTime(fi fs.FileInfo) int64 { return fi.ModTime().UnixNano() }
