//go:build unix

package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// OpenRegular opens name for reading, and returns its size, without ever
// blocking on what it opens: O_NONBLOCK (and O_NOFOLLOW unless followLinks), then fstat, and
// anything but a regular file is closed and refused with an error wrapping
// ErrNotRegular (a symbolic link where links are not followed says so). A
// missing file gives an error wrapping fs.ErrNotExist.
//
// It is the one place of that rule: config, schemas, kept files and the
// graph file are all opened through it. The descriptor is made blocking
// again before it becomes an *os.File, so os treats it as the ordinary
// file it is.
func OpenRegular(name string, followLinks bool) (*os.File, int64, error) {
	fd, size, err := openRegularFD(name, followLinks)
	if err != nil {
		return nil, 0, err
	}
	// F_SETFL sets only the status flags (O_NONBLOCK, O_APPEND, ...): 0
	// clears O_NONBLOCK and nothing else was set.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, 0); errno != 0 {
		syscall.Close(fd)
		return nil, 0, &fs.PathError{Op: "fcntl", Path: name, Err: errno}
	}
	return os.NewFile(uintptr(fd), name), size, nil
}

// openRegularFD opens name as OpenRegular does and returns the descriptor,
// still O_NONBLOCK (which changes nothing for a regular file), and the size.
func openRegularFD(name string, followLinks bool) (int, int64, error) {
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !followLinks {
		flags |= syscall.O_NOFOLLOW
	}
	var (
		fd  int
		err error
	)
	for {
		fd, err = syscall.Open(name, flags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) && !followLinks {
			return -1, 0, fmt.Errorf("%w (a symbolic link; not followed)", ErrNotRegular)
		}
		if errors.Is(err, syscall.ENXIO) { // a socket cannot be opened: say what it is
			var st syscall.Stat_t
			if syscall.Stat(name, &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				return -1, 0, fmt.Errorf("%w (%s)", ErrNotRegular, kindOfStat(uint32(st.Mode)))
			}
		}
		return -1, 0, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, 0, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return -1, 0, fmt.Errorf("%w (%s)", ErrNotRegular, kindOfStat(uint32(st.Mode)))
	}
	return fd, st.Size, nil
}

// readRegular is ReadRegular on the descriptor itself: no *os.File (its
// set-up and the descriptor flag calls cost more than reading a small
// file), a buffer of the size fstat gave plus one byte, so that reading to
// the end takes two reads and a file that grew meanwhile is seen.
func readRegular(name string, limit int64, followLinks bool) ([]byte, error) {
	fd, size, err := openRegularFD(name, followLinks)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return readFD(fd, name, size, limit)
}

// readFD reads the open regular file fd of size bytes (its fstat) to its
// end, at most limit bytes (limit <= 0: no limit); name is for errors.
func readFD(fd int, name string, size, limit int64) ([]byte, error) {
	if limit > 0 && size > limit {
		return nil, largerThan(size, limit)
	}
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)/2+512) // it grew since the fstat
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if limit > 0 && int64(len(buf)) > limit {
			return nil, grewPast(limit)
		}
	}
}

func kindOfStat(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "a named pipe"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFLNK:
		return "a symbolic link"
	}
	return fmt.Sprintf("mode %o", mode)
}
