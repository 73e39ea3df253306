//go:build linux

package odb

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/gitperm"
)

// On Linux new files are made with O_TMPFILE and then linked into place.
// The inode is written before it has a name, so no temporary name, rename
// or clean-up is needed, and linkat fails with EEXIST exactly as
// O_CREAT|O_EXCL does, which keeps git's lock-file protocol intact. On this
// project's ext4 test machines it costs a third of an O_CREAT. Where the
// kernel, the file system or a missing /proc refuses it, the portable path
// (O_EXCL temp file + rename) is used from then on.

var noTmpfile atomic.Bool

// UseTmpfile turns the O_TMPFILE path on or off (off: the portable path is
// used, as where the kernel refuses O_TMPFILE) and returns the previous
// setting. It is for tests of the portable path.
func UseTmpfile(on bool) (was bool) {
	checkProc()
	return !noTmpfile.Swap(!on)
}

// checkProc turns the O_TMPFILE path off when /proc, which link needs, is
// missing. It runs at the first object written, not at start-up: a
// command that writes nothing (most hook calls) does not pay for it.
var checkProc = sync.OnceFunc(func() {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		noTmpfile.Store(true)
	}
})

// unsupported reports errors that mean O_TMPFILE is not available here.
func unsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) ||
		errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)
}

// tmpfileIn opens an unnamed file in dir, creating dir (and retrying when
// git removes an emptied directory in between). ok is false when the caller
// must use the portable path. The file has its shared mode (sh) already.
func tmpfileIn(dir string, perm os.FileMode, sh gitperm.Shared) (f *os.File, ok bool, err error) {
	for try := 0; try < 100; try++ {
		fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm))
		if err == nil {
			f := os.NewFile(uintptr(fd), filepath.Join(dir, "(tmpfile)"))
			if err := sh.FixFile(f); err != nil {
				f.Close()
				return nil, true, err
			}
			return f, true, nil
		}
		if unsupported(err) {
			noTmpfile.Store(true)
			return nil, false, nil
		}
		if !errors.Is(err, unix.ENOENT) {
			// E.g. EPERM for a directory git is removing this instant: let
			// the portable path (which retries) handle this one file.
			return nil, false, nil
		}
		if merr := sh.MkdirAll(dir); merr != nil && !errors.Is(merr, os.ErrNotExist) {
			return nil, true, merr
		}
	}
	return nil, true, &os.PathError{Op: "open", Path: dir, Err: unix.ENOENT}
}

// link gives the unnamed file f the name path.
func link(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return &os.PathError{Op: "link", Path: path, Err: os.ErrExist}
	}
	return &os.PathError{Op: "link", Path: path, Err: err}
}

func createFileTmpfile(path string, data []byte, perm os.FileMode, sh gitperm.Shared, fsync bool) (bool, error) {
	checkProc()
	if noTmpfile.Load() {
		return false, nil
	}
	for try := 0; try < 100; try++ {
		f, ok, err := tmpfileIn(filepath.Dir(path), perm, sh)
		if !ok || err != nil {
			return ok, err
		}
		_, err = f.Write(data)
		if err == nil && fsync {
			err = f.Sync()
		}
		if err == nil {
			err = link(f, path)
		}
		f.Close()
		switch {
		case errors.Is(err, unix.ENOENT):
			continue // the directory vanished after the open: again
		case err != nil && !errors.Is(err, os.ErrExist):
			return false, nil // the portable path handles this one file
		}
		return true, err
	}
	return true, &os.PathError{Op: "link", Path: path, Err: unix.ENOENT}
}

func createExclTmpfile(path string, perm os.FileMode, sh gitperm.Shared) (*os.File, bool, error) {
	checkProc()
	if noTmpfile.Load() {
		return nil, false, nil
	}
	for try := 0; try < 100; try++ {
		f, ok, err := tmpfileIn(filepath.Dir(path), perm, sh)
		if !ok || err != nil {
			return nil, ok, err
		}
		err = link(f, path)
		if err == nil {
			return f, true, nil
		}
		f.Close()
		switch {
		case errors.Is(err, unix.ENOENT):
			continue
		case !errors.Is(err, os.ErrExist):
			return nil, false, nil // the portable path handles this one file
		}
		return nil, true, err
	}
	return nil, true, &os.PathError{Op: "link", Path: path, Err: unix.ENOENT}
}
