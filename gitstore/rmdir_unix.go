//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

// rmdir removes the empty folder path, and never a file there (os.Remove
// unlinks one).
func rmdir(path string) error {
	if err := syscall.Rmdir(path); err != nil {
		return &os.PathError{Op: "rmdir", Path: path, Err: err}
	}
	return nil
}
