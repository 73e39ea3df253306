//go:build !unix

package gitstore

import "os"

// fileOwner: without uids here every path is the user's own.
func fileOwner(path string) (int, error) {
	if _, err := os.Lstat(path); err != nil {
		return -1, err
	}
	return os.Geteuid(), nil
}
