//go:build !unix

package state

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens name for reading and refuses anything but a regular
// file with an error wrapping ErrNotRegular (see the unix version).
func OpenRegular(name string, followLinks bool) (*os.File, int64, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !followLinks {
		if st, err := os.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, 0, fmt.Errorf("%w (a symbolic link; not followed)", ErrNotRegular)
		}
	}
	f, err := os.OpenFile(name, flags, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}

// readRegular is ReadRegular through an *os.File.
func readRegular(name string, limit int64, followLinks bool) ([]byte, error) {
	f, size, err := OpenRegular(name, followLinks)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit > 0 && size > limit {
		return nil, largerThan(size, limit)
	}
	return readAll(f, limit)
}

// readAll reads r to its end, at most limit bytes (limit <= 0: no limit).
func readAll(r io.Reader, limit int64) ([]byte, error) {
	if limit > 0 {
		r = io.LimitReader(r, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, grewPast(limit)
	}
	return data, nil
}
