package graph

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps tmp and path atomically (renameat2 RENAME_EXCHANGE), so
// the version it replaces stays readable at tmp. When path does not exist it
// renames without replacing (RENAME_NOREPLACE; an error wrapping
// fs.ErrExist when path appeared meanwhile). It returns moveUnsupported when
// the file system has neither, so the caller falls back to a plain rename.
func exchange(tmp, path string) (moveResult, error) {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return moveExchanged, nil
	case errors.Is(err, unix.ENOENT):
		err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
		switch {
		case err == nil:
			return moveRenamed, nil
		case errors.Is(err, unix.EEXIST):
			return moveUnsupported, os.ErrExist
		case unsupported(err):
			return moveUnsupported, nil
		}
		return moveUnsupported, err
	case unsupported(err):
		return moveUnsupported, nil
	}
	return moveUnsupported, err
}

func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}
