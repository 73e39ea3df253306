package atomicfile

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dir is a directory a Batch writes in, open once for all its files (O_PATH
// is not enough: it is fsynced). Every step on its files is relative to the
// open directory, so it happens where the check (Batch.DirOK) found the
// directory to be, whatever its path names by then.
type dir struct {
	path string    // as the caller named it
	fd   int       // -1 once closed (see spare)
	id   [2]uint64 // its device and inode, taken when spare closes it
	dirState
}

// noOpenat2 is set once openat2(2) was refused (before Linux 5.6, or a
// sandbox not knowing it): plain open(2) from then on.
var noOpenat2 atomic.Bool

// openDir opens the directory path, following symbolic links but no
// /proc magic link (the real path is judged afterwards).
func openDir(path string) (*dir, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	fd, err := -1, error(unix.ENOSYS)
	if !noOpenat2.Load() {
		fd, err = unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_MAGICLINKS})
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			noOpenat2.Store(true)
		}
	}
	if noOpenat2.Load() {
		fd, err = unix.Open(path, flags, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &dir{path: path, fd: fd}, nil
}

// openKeepDir opens path as a directory only if it is one itself, not a
// symbolic link to one.
func openKeepDir(path string) (*dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &dir{path: path, fd: fd}, nil
}

// realPath is where d really is now: its path from /proc/self/fd; without
// /proc, its path resolved now, if that is d.
func (d *dir) realPath() (string, error) {
	if real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(d.fd)); err == nil {
		return real, nil
	}
	real, err := filepath.EvalSymlinks(d.path)
	if err != nil {
		return "", err
	}
	if !d.isAt(real) {
		return "", &os.PathError{Op: "open", Path: d.path, Err: errDirMoved}
	}
	return real, nil
}

// isAt reports whether path names d itself now.
func (d *dir) isAt(path string) bool {
	var at, st unix.Stat_t
	return unix.Stat(path, &at) == nil && unix.Fstat(d.fd, &st) == nil && at.Dev == st.Dev && at.Ino == st.Ino
}

func (d *dir) create(tmp string, mode fs.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Openat(d.fd, tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: filepath.Join(d.path, tmp), Err: err}
		}
		return os.NewFile(uintptr(fd), filepath.Join(d.path, tmp)), nil
	}
}

func (d *dir) rename(tmp, base string) error {
	if err := unix.Renameat(d.fd, tmp, d.fd, base); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, tmp), New: filepath.Join(d.path, base), Err: err}
	}
	return nil
}

// renameNew renames tmp to base unless base exists (RENAME_NOREPLACE): an
// error wrapping fs.ErrExist then, and tmp is left. A file system without
// that flag gets a check right before a plain rename.
func (d *dir) renameNew(tmp, base string) error {
	err := unix.Renameat2(d.fd, tmp, d.fd, base, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		var st unix.Stat_t
		if err = unix.Fstatat(d.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
			err = unix.EEXIST
		} else if err == unix.ENOENT {
			err = unix.Renameat(d.fd, tmp, d.fd, base)
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, tmp), New: filepath.Join(d.path, base), Err: err}
	}
	return nil
}

// exchange swaps the files at a and b in d in one step (renameat2(2)
// with RENAME_EXCHANGE): an error wrapping fs.ErrNotExist when either name
// is missing, errNoExchange when the file system cannot swap.
func (d *dir) exchange(a, b string) error {
	err := unix.Renameat2(d.fd, a, d.fd, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: filepath.Join(d.path, a), New: filepath.Join(d.path, b), Err: err}
	}
	return nil
}

// held is a file held open by hold (O_PATH): while it is, its inode
// number names no other file, so a file found later with the same one is
// this file.
type held struct{ fd int }

// hold opens base in d, not following a link, to tell it apart later.
func (d *dir) hold(base string) (held, error) {
	fd, err := unix.Openat(d.fd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return held{fd: -1}, &os.PathError{Op: "open", Path: filepath.Join(d.path, base), Err: err}
	}
	return held{fd: fd}, nil
}

// is reports whether fi (from d.stat) is the held file.
func (h held) is(fi fs.FileInfo) bool {
	s := &statInfo{}
	return fi != nil && h.fd >= 0 && unix.Fstat(h.fd, &s.st) == nil && SameFile(fi, s)
}

// changeTime is fi's inode change time (ctime), in nanoseconds; 0 when
// fi does not carry it.
func changeTime(fi fs.FileInfo) int64 {
	switch st := fi.Sys().(type) {
	case *unix.Stat_t:
		return st.Ctim.Nano()
	case *syscall.Stat_t:
		return st.Ctim.Nano()
	}
	return 0
}

// held reports whether h holds a file (always here; not on systems
// without exchange, where replace renames).
func (h held) held() bool { return h.fd >= 0 }

func (h held) release() {
	if h.fd >= 0 {
		unix.Close(h.fd)
	}
}

// lstat is os.Lstat of base in d.
func (d *dir) lstat(base string) (fs.FileInfo, error) {
	s := &statInfo{name: base}
	if err := unix.Fstatat(d.fd, base, &s.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: filepath.Join(d.path, base), Err: err}
	}
	return s, nil
}

// ownTemp opens the temp file tmp of d, never following a link (and
// never waiting on a pipe), when it is still made, the regular file made
// as made says: ok false, nothing open, for anything another process put
// at its name.
func (d *dir) ownTemp(tmp string, made fs.FileInfo) (*os.File, bool) {
	if made == nil {
		return nil, false
	}
	// looked at first without opening it: a device node put at the name
	// is never opened (its driver's open would run; attack36f L)
	if st, err := d.lstat(tmp); err != nil || !st.Mode().IsRegular() || !sameMade(st, made) {
		return nil, false
	}
	fd, err := unix.Openat(d.fd, tmp, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), filepath.Join(d.path, tmp))
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || !sameMade(st, made) {
		f.Close()
		return nil, false
	}
	return f, true
}

func (d *dir) remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// linkInto links base in d as name in to.
func (d *dir) linkInto(base string, to *dir, name string) error {
	if err := unix.Linkat(d.fd, base, to.fd, name, 0); err != nil {
		return &os.LinkError{Op: "link", Old: filepath.Join(d.path, base), New: filepath.Join(to.path, name), Err: err}
	}
	return nil
}

// spare closes d, remembering which directory it is, for reopen to
// open it again.
func (d *dir) spare() {
	var st unix.Stat_t
	if unix.Fstat(d.fd, &st) == nil {
		d.id = [2]uint64{st.Dev, st.Ino}
	}
	d.close()
}

// reopen opens d's path again after spare, if it still names the very
// directory spare closed (same device and inode); else, or when nothing
// or no directory is there, it is an error wrapping errDirMoved, and d
// stays closed. Any other error (out of descriptors, say) is the open's.
// The caller judges where it is again: a directory removed meanwhile and
// another made at its path with its inode number is written in only where
// that judgement allows.
func (d *dir) reopen() error {
	nd, err := openAgain(d.path)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return &os.PathError{Op: "open", Path: d.path, Err: errDirMoved}
	}
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(nd.fd, &st); err != nil || [2]uint64{st.Dev, st.Ino} != d.id {
		nd.close()
		return &os.PathError{Op: "open", Path: d.path, Err: errDirMoved}
	}
	d.fd = nd.fd
	return nil
}

// openAgain is reopen's openDir; tests replace it to fail.
var openAgain = openDir

// isOpen reports whether d is open (not closed by spare).
func (d *dir) isOpen() bool { return d.fd >= 0 }

// openMax is the process's open-file limit (RLIMIT_NOFILE), 0 when
// unknown. A Batch holds at most half of it, leaving the rest to the
// process (git's pack files, locks): a quarter in unnamed temp files
// (unnamedMax), an eighth in directories (dirMax) and an eighth in
// written temp files awaiting their fsync (groupMax). Go raises the limit
// to the hard one at start, commonly far above what a batch needs, so
// the bounds matter under a low hard limit (ulimit -n 128) only.
var openMax = sync.OnceValue(func() uint64 {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	return l.Cur
})

// dirMax bounds the directories a Batch holds open (see openMax), at most
// 8 192. Past it, the directory opened longest ago is closed, and opened
// again when a file there needs it (see Batch).
var dirMax = sync.OnceValue(func() int {
	if openMax() == 0 {
		return math.MaxInt
	}
	return int(max(min(openMax()/8, 8192), 1))
})

// groupMax bounds the written temp files a Batch keeps open before it
// fsyncs them together (see openMax): syncGroup, or fewer under a low
// limit.
var groupMax = sync.OnceValue(func() int {
	if openMax() == 0 {
		return syncGroup
	}
	return int(max(min(openMax()/8, syncGroup), 1))
})

// sync fsyncs d, best effort as SyncDir.
func (d *dir) sync() { _ = unix.Fsync(d.fd) }

func (d *dir) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}

// statInfo is fs.FileInfo from fstatat(2); its Sys is a *unix.Stat_t
// (SameFile compares it with os.Lstat's).
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

// Mode is as os.Lstat gives it.
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if s.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// SameFile is os.SameFile, also for the file information a Batch gives
// Unchanged.
func SameFile(a, b fs.FileInfo) bool {
	x, okA := fileID(a)
	y, okB := fileID(b)
	if okA && okB {
		return x == y
	}
	return os.SameFile(a, b)
}

func fileID(fi fs.FileInfo) ([2]uint64, bool) {
	if fi == nil {
		return [2]uint64{}, false
	}
	switch s := fi.Sys().(type) {
	case *syscall.Stat_t:
		return [2]uint64{uint64(s.Dev), s.Ino}, true
	case *unix.Stat_t:
		return [2]uint64{s.Dev, s.Ino}, true
	}
	return [2]uint64{}, false
}

// MkdirAll makes path's missing directories, as os.MkdirAll does, but
// through a checked handle: the nearest directory of path that exists is
// opened (following symbolic links, as a Batch opens one), ok judges where
// it really is, and each missing directory is then made relative to its
// open parent (mkdirat) and opened without following a link, so a folder
// swapped for a link (into .git, out of the work tree) after ok's check is
// never created through. ok's error is returned as it is.
func MkdirAll(path string, perm fs.FileMode, ok func(real string) error) error {
	path = filepath.Clean(path)
	var missing []string
	p := path
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return err
		}
		missing = append(missing, filepath.Base(p))
		p = parent
	}
	if len(missing) == 0 {
		return nil
	}
	d, err := openDir(p)
	if err != nil {
		return err
	}
	defer d.close()
	if ok != nil {
		real, err := d.realPath()
		if err != nil {
			return err
		}
		if err := ok(real); err != nil {
			return err
		}
	}
	fd := d.fd
	defer func() {
		if fd != d.fd {
			unix.Close(fd)
		}
	}()
	for i := len(missing) - 1; i >= 0; i-- {
		name := missing[i]
		if err := unix.Mkdirat(fd, name, uint32(perm.Perm())); err != nil && err != unix.EEXIST {
			return &os.PathError{Op: "mkdir", Path: filepath.Join(p, name), Err: err}
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: filepath.Join(p, name), Err: err}
		}
		if fd != d.fd {
			unix.Close(fd)
		}
		fd = next
		p = filepath.Join(p, name)
	}
	return nil
}

// openAppend opens base in d for an append in place (see Append): read and
// write, O_APPEND, not following a symbolic link (an error matching
// isLoop), not blocking on a pipe.
func (d *dir) openAppend(base string) (*os.File, error) {
	for {
		fd, err := unix.Openat(d.fd, base, unix.O_RDWR|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: filepath.Join(d.path, base), Err: err}
		}
		return os.NewFile(uintptr(fd), filepath.Join(d.path, base)), nil
	}
}

// isLoop reports whether err is O_NOFOLLOW's refusal of a symbolic link.
func isLoop(err error) bool { return errors.Is(err, unix.ELOOP) }

// links is fi's hard link count (1 when unknown).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// errIsDir is unlinkat's refusal of a directory without AT_REMOVEDIR.
var errIsDir error = unix.EISDIR

func (d *dir) rmdir(name string) error {
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

func (d *dir) mkdir(name string, perm fs.FileMode) error {
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); err != nil {
		return &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// sub opens the directory name in d, not following a link at name.
func (d *dir) sub(name string) (*dir, error) {
	fd, err := openatRetry(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
	}
	return &dir{path: filepath.Join(d.path, name), fd: fd}, nil
}

// readDir lists d, through a descriptor of its own (d's offset is left).
func (d *dir) readDir() ([]fs.DirEntry, error) {
	fd, err := openatRetry(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.ReadDir(-1)
}

func openatRetry(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
