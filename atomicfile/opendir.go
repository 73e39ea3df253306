package atomicfile

import (
	"errors"
	"io/fs"
)

// Dir is a directory opened once and judged where it really is, for a
// writer whose file protocol is its own (the L3 graph file: its lock
// folder, temp file and exchange): as in a Batch, on Linux every step
// through a Dir is taken relative to the open directory, so a folder
// swapped for a symbolic link (out of the work tree, into .git) after the
// judgement is never written through. Elsewhere the steps go by path.
type Dir struct{ d *dir }

// ErrNoExchange is Dir.Exchange's error where the file system cannot swap
// two files: the caller renames instead.
var ErrNoExchange = errNoExchange

// OpenDir opens the directory path (following symbolic links, as a Batch
// does) and has ok, when not nil, judge where it really is (real, all
// links resolved); ok's error is returned as it is, and nothing is open
// then.
func OpenDir(path string, ok func(dir, real string) error) (*Dir, error) {
	d, err := openDir(path)
	if err != nil {
		return nil, err
	}
	if err := d.judge(ok); err != nil {
		d.close()
		return nil, err
	}
	return &Dir{d: d}, nil
}

// Path is the directory's path as the caller named it.
func (D *Dir) Path() string { return D.d.path }

// Close closes the directory.
func (D *Dir) Close() { D.d.close() }

// WriteTemp writes data to a new temp file in the directory, named as
// WriteTemp names the temp file of base, with mode, fsynced and closed,
// and returns the temp file's base name. On error nothing is left.
func (D *Dir) WriteTemp(base string, data []byte, mode fs.FileMode) (string, error) {
	return D.d.writeTemp(base, data, mode)
}

// Exchange swaps the files a and b in the directory in one step: an error
// wrapping fs.ErrNotExist when either is missing, ErrNoExchange when the
// file system cannot swap.
func (D *Dir) Exchange(a, b string) error { return D.d.exchange(a, b) }

// Rename renames old to new in the directory, replacing new.
func (D *Dir) Rename(old, new string) error { return D.d.rename(old, new) }

// RenameNew renames old to new unless new exists: an error wrapping
// fs.ErrExist then (one step on Linux, RENAME_NOREPLACE).
func (D *Dir) RenameNew(old, new string) error { return D.d.renameNew(old, new) }

// Remove removes the file or empty directory name in the directory.
func (D *Dir) Remove(name string) error {
	err := D.d.remove(name)
	if errors.Is(err, errIsDir) {
		err = D.d.rmdir(name)
	}
	return err
}

// Lstat is os.Lstat of name in the directory.
func (D *Dir) Lstat(name string) (fs.FileInfo, error) { return D.d.lstat(name) }

// Mkdir makes the directory name in the directory.
func (D *Dir) Mkdir(name string, perm fs.FileMode) error { return D.d.mkdir(name, perm) }

// Sub opens the directory name in the directory, not following a
// symbolic link at name.
func (D *Dir) Sub(name string) (*Dir, error) {
	d, err := D.d.sub(name)
	if err != nil {
		return nil, err
	}
	return &Dir{d: d}, nil
}

// CreateEmpty creates the empty file name in the directory, unless
// something is there (an error wrapping fs.ErrExist).
func (D *Dir) CreateEmpty(name string, mode fs.FileMode) error {
	f, err := D.d.create(name, mode)
	if err != nil {
		return err
	}
	return f.Close()
}

// ReadDir lists the directory.
func (D *Dir) ReadDir() ([]fs.DirEntry, error) { return D.d.readDir() }

// Sync fsyncs the directory, best effort as SyncDir.
func (D *Dir) Sync() { D.d.sync() }
