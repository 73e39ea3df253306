package state

import (
	"errors"
	"fmt"
	"io"
)

// ErrNotRegular is a file that is not a regular file (a named pipe, a
// device, a directory, or a symbolic link where links are not followed).
var ErrNotRegular = errors.New("not a regular file")

// ReadRegular reads a regular file of at most limit bytes (no limit when
// limit <= 0) without ever blocking on what it opens: the file is opened
// with O_NONBLOCK (and O_NOFOLLOW unless followLinks), then fstat'ed, and
// anything but a regular file is refused with an error wrapping
// ErrNotRegular. A named pipe with nobody writing to it would otherwise
// hang the reader for ever. A missing file gives an error wrapping
// fs.ErrNotExist.
func ReadRegular(name string, limit int64, followLinks bool) ([]byte, error) {
	f, size, err := OpenRegular(name, followLinks)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("file is %d bytes, larger than %d", size, limit)
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, fmt.Errorf("file grew past %d bytes while read", limit)
	}
	return data, nil
}
