//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

// fileOwner is the uid owning path itself (lstat: a symbolic link's own).
func fileOwner(path string) (int, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return -1, err
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid), nil
}
