//go:build !linux

package odb

import (
	"os"

	"github.com/strata-dev/strata/gitperm"
)

func createFileTmpfile(path string, data []byte, perm os.FileMode, sh gitperm.Shared, fsync bool) (bool, error) {
	return false, nil
}

func createExclTmpfile(path string, perm os.FileMode, sh gitperm.Shared) (*os.File, bool, error) {
	return nil, false, nil
}

// UseTmpfile has no effect where O_TMPFILE does not exist.
func UseTmpfile(on bool) (was bool) { return false }
