package state

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrNotRegular is a file that is not a regular file (a named pipe, a
// device, a directory, or a symbolic link where links are not followed).
var ErrNotRegular = errors.New("not a regular file")

// NotRegular says what a file of mode is when it is not a regular file, as
// one problem line says it: "not a regular file (a named pipe)".
func NotRegular(mode fs.FileMode) string {
	kind := "not a regular file"
	switch {
	case mode&fs.ModeSymlink != 0:
		return kind + " (a symbolic link, never followed)"
	case mode.IsDir():
		return kind + " (a directory)"
	case mode&fs.ModeNamedPipe != 0:
		return kind + " (a named pipe)"
	case mode&fs.ModeSocket != 0:
		return kind + " (a socket)"
	case mode&fs.ModeDevice != 0:
		return kind + " (a device)"
	}
	return kind
}

// ErrTooLarge is a file larger than the limit ReadRegular was given, when
// opened or grown while read.
var ErrTooLarge = errors.New("file too large")

// ReadRegular reads a regular file of at most limit bytes (no limit when
// limit <= 0) without ever blocking on what it opens: the file is opened
// with O_NONBLOCK (and O_NOFOLLOW unless followLinks), then fstat'ed, and
// anything but a regular file is refused with an error wrapping
// ErrNotRegular. A named pipe with nobody writing to it would otherwise
// hang the reader for ever. A missing file gives an error wrapping
// fs.ErrNotExist, one over limit an error wrapping ErrTooLarge.
func ReadRegular(name string, limit int64, followLinks bool) ([]byte, error) {
	return readRegular(name, limit, followLinks)
}

// sizeError is a file over a read's limit.
type sizeError struct{ msg string }

func (e *sizeError) Error() string        { return e.msg }
func (e *sizeError) Is(target error) bool { return target == ErrTooLarge }

func largerThan(size, limit int64) error {
	return &sizeError{fmt.Sprintf("file is %d bytes, larger than %d", size, limit)}
}

func grewPast(limit int64) error {
	return &sizeError{fmt.Sprintf("file grew past %d bytes while read", limit)}
}

// Files reads a repository's files by repo-relative, slash-separated path
// from somewhere other than the work tree: the git index, for the
// pre-commit hook, which judges what the commit will hold.
type Files interface {
	// ReadFile returns the content of the regular file at rel. It returns
	// an error wrapping fs.ErrNotExist when there is none, one wrapping
	// ErrNotRegular for a symbolic link or a submodule, and one wrapping
	// ErrTooLarge when it is larger than limit bytes (limit > 0).
	ReadFile(rel string, limit int64) ([]byte, error)
}
