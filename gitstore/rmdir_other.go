//go:build !unix

package gitstore

import (
	"os"
	"syscall"
)

// rmdir removes the empty folder path, and not a file found there first
// (os.Remove would unlink one); a file put there between the check and
// the removal is not told apart here.
func rmdir(path string) error {
	if st, err := os.Lstat(path); err != nil {
		return err
	} else if !st.IsDir() {
		return &os.PathError{Op: "rmdir", Path: path, Err: syscall.ENOTDIR}
	}
	return os.Remove(path)
}
