package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new file without a name in d (O_TMPFILE): it
// appears nowhere until linkUnnamed gives it one, and a crash before that
// leaves nothing behind (the kernel frees it). It fails where the file
// system cannot make one, and where /proc is not mounted (linkUnnamed
// needs it); the batch then makes a named temp file.
func (d *dir) openUnnamed(mode fs.FileMode) (*os.File, error) {
	if !unnamedWorks() {
		return nil, errNoUnnamed
	}
	fd, err := unix.Openat(d.fd, ".", unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	return os.NewFile(uintptr(fd), d.path), nil
}

// linkUnnamed gives f, opened by openUnnamed, the name base in d. Like
// link(2), it never replaces: an error wrapping fs.ErrExist when base
// exists. It
// links the open file itself (linkat with AT_EMPTY_PATH: recent kernels let
// the process that opened it do so, as this machine's 6.18 does for an
// unprivileged user, older ones only a process with CAP_DAC_READ_SEARCH;
// about 3 µs less a file than the other way: 1 000
// links took 4.8 instead of 7.5 ms on tmpfs, 16 instead of 19 on ext4) and,
// where that is refused, through its /proc/self/fd link, the way every
// kernel since O_TMPFILE allows; once that way worked where the first was
// refused, the process takes it from the start.
func (d *dir) linkUnnamed(f *os.File, base string) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := conn.Control(func(fd uintptr) {
		if !viaProc.Load() {
			lerr = linkEmpty(int(fd), d.fd, base)
			if !errors.Is(lerr, unix.ENOENT) && !errors.Is(lerr, unix.EPERM) {
				return // linked, or refused for a reason the other way shares (EEXIST...)
			}
		}
		perr := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(fd)), d.fd, base, unix.AT_SYMLINK_FOLLOW)
		if perr == nil && lerr != nil {
			viaProc.Store(true) // the empty path was refused, not the name
		}
		lerr = perr
	}); err != nil {
		return err
	}
	if lerr != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: filepath.Join(d.path, base), Err: lerr}
	}
	return nil
}

// linkEmpty links the open file fd as base in the directory dfd
// (AT_EMPTY_PATH); tests replace it to refuse as an older kernel does.
var linkEmpty = func(fd, dfd int, base string) error {
	return unix.Linkat(fd, "", dfd, base, unix.AT_EMPTY_PATH)
}

// viaProc is set once linkEmpty was refused and the /proc way worked.
var viaProc atomic.Bool

// renameNew renames tmp to name unless name exists (RENAME_NOREPLACE): an
// error wrapping fs.ErrExist then, and tmp is left. A file system without
// that flag gets a check right before a plain rename (checkedRename).
func renameNew(tmp, name string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, name, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return checkedRename(tmp, name)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: name, Err: err}
	}
	return nil
}

// unnamedMax bounds the unnamed files a batch holds open until Commit: a
// quarter of the process's open-file limit (see openMax), at most 8 192;
// none when the limit is unknown. Past it, a batch's new files are named
// temp files, as every file once was.
var unnamedMax = sync.OnceValue(func() int {
	return int(min(openMax()/4, 8192))
})

// unnamedWorks reports whether /proc/self/fd, through which linkUnnamed
// names a file, is there.
var unnamedWorks = sync.OnceValue(func() bool {
	st, err := os.Stat("/proc/self/fd")
	return err == nil && st.IsDir()
})
