//go:build linux || darwin || freebsd || netbsd || openbsd

package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// errWalk is openFast's answer when the walk must resolve the path: a
// symbolic link on the way (or at the end), a "..", a rename racing the
// kernel's resolution, or no openat2 at all.
var errWalk = errors.New("resolve by walking")

// fileFlags open the file itself: never blocking, never following a link.
const fileFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_CLOEXEC

func (t Tree) readFile(rel string, limit int64) ([]byte, fs.FileMode, error) {
	name := filepath.Join(t.Root, filepath.FromSlash(rel))
	fd, st, err := t.open(rel, name)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(fd)
	data, err := readFD(fd, name, st.Size, limit)
	if err != nil {
		return nil, 0, err
	}
	return data, fs.FileMode(st.Mode & 0o777), nil
}

// open opens rel beneath the root and returns the descriptor (still
// O_NONBLOCK, which changes nothing for a regular file) and its fstat:
// beneath t.Dir when the caller holds the root open for a batch of reads,
// else beneath the root opened now.
func (t Tree) open(rel, name string) (int, unix.Stat_t, error) {
	if t.Dir != nil {
		if rc, err := t.Dir.SyscallConn(); err == nil {
			var (
				fd  int
				st  unix.Stat_t
				err error
			)
			// Control keeps the descriptor from being closed (OpenDir's
			// holder closing it) until the open is done; a holder that has
			// closed it already gives an error: the root is opened again.
			if rc.Control(func(root uintptr) { fd, st, err = t.openBeneath(int(root), rel, name) }) == nil {
				return fd, st, err
			}
		}
	}
	root, err := openatRetry(unix.AT_FDCWD, t.Root, dirFlags&^unix.O_NOFOLLOW)
	if err != nil {
		return -1, unix.Stat_t{}, &fs.PathError{Op: "open", Path: t.Root, Err: err}
	}
	defer unix.Close(root)
	return t.openBeneath(root, rel, name)
}

// OpenDir opens a Tree's root for a batch of reads (Tree.Dir): the folder
// at root now, whatever is renamed later, so a holder keeps it no longer
// than one command or one watcher batch, and closes it.
func OpenDir(root string) (*os.File, error) {
	fd, err := openatRetry(unix.AT_FDCWD, root, dirFlags&^unix.O_NOFOLLOW)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return os.NewFile(uintptr(fd), root), nil
}

// openBeneath is open's work beneath the root's descriptor.
func (t Tree) openBeneath(root int, rel, name string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	if beforeTreeOpen != nil {
		beforeTreeOpen(rel)
	}
	fd, realRel, err := openFast(root, path.Clean(rel))
	if errors.Is(err, errWalk) {
		fd, realRel, err = t.walk(root, rel)
	}
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			err = &fs.PathError{Op: "open", Path: name, Err: errno}
		}
		return -1, st, err
	}
	if err := t.judge(realRel); err != nil {
		unix.Close(fd)
		return -1, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, st, fmt.Errorf("%w (%s)", ErrNotRegular, kindOfStat(uint32(st.Mode)))
	}
	return fd, st, nil
}

// walk resolves rel one name at a time from the root's descriptor, each
// folder opened with O_NOFOLLOW|O_DIRECTORY relative to the one before, so
// what it finds is where it looked, whatever is renamed meanwhile. A
// symbolic link on the way is read and followed by the walk itself: a
// relative one from the folder holding it, an absolute one only when it
// names a place in the tree (from the root again); a ".." above the root
// is refused. It returns the file's descriptor and its real path relative
// to the root.
func (t Tree) walk(root int, rel string) (int, string, error) {
	type step struct {
		fd   int
		name string
	}
	var stack []step // the folders below the root, open
	defer func() {
		for _, s := range stack {
			unix.Close(s.fd)
		}
	}()
	cur := func() int {
		if len(stack) == 0 {
			return root
		}
		return stack[len(stack)-1].fd
	}
	realRel := func(last string) string {
		p := ""
		for _, s := range stack {
			p = path.Join(p, s.name)
		}
		return path.Join(p, last)
	}
	comps, links := splitRel(rel), 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		if c == ".." {
			if len(stack) == 0 {
				return -1, "", ErrOutside
			}
			unix.Close(stack[len(stack)-1].fd)
			stack = stack[:len(stack)-1]
			continue
		}
		last := len(comps) == 0
		flags := dirFlags
		if last {
			flags = fileFlags
		}
		fd, err := openatRetry(cur(), c, flags)
		if err == nil {
			if last {
				return fd, realRel(c), nil
			}
			stack = append(stack, step{fd, c})
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(cur(), c, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return -1, "", err
		}
		switch {
		case st.Mode&unix.S_IFMT != unix.S_IFLNK:
			if last && st.Mode&unix.S_IFMT != unix.S_IFREG { // a socket: open says ENXIO
				return -1, "", fmt.Errorf("%w (%s)", ErrNotRegular, kindOfStat(uint32(st.Mode)))
			}
			return -1, "", err
		case last:
			return -1, "", fmt.Errorf("%w (a symbolic link; not followed)", ErrNotRegular)
		}
		if links++; links > maxLinks {
			return -1, "", unix.ELOOP
		}
		target, err := readlinkat(cur(), c)
		if err != nil {
			return -1, "", err
		}
		if !filepath.IsAbs(target) {
			comps = append(splitRel(target), comps...)
			continue
		}
		in, ok := t.linkTarget(target)
		if !ok {
			return -1, "", ErrOutside
		}
		for _, s := range stack {
			unix.Close(s.fd)
		}
		stack = nil
		comps = append(in, comps...)
	}
	return -1, "", fmt.Errorf("%w (a directory)", ErrNotRegular) // rel names the root
}

func openatRetry(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
