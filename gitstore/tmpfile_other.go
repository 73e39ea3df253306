//go:build !linux

package gitstore

import "os"

func createFileTmpfile(path string, data []byte, perm os.FileMode) (bool, error) {
	return false, nil
}

func createExclTmpfile(path string, perm os.FileMode) (*os.File, bool, error) {
	return nil, false, nil
}
