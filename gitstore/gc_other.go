//go:build !unix

package gitstore

import (
	"os"
	"os/exec"

	"github.com/strata-dev/strata/gitperm"
)

func detach(cmd *exec.Cmd) {}

// tryLock opens path; without flock(2) here, nothing keeps two background
// repacks apart.
func tryLock(path string, sh gitperm.Shared) *os.File {
	f, err := sh.OpenFile(path, os.O_RDWR)
	if err != nil {
		return nil
	}
	return f
}

// inherit: a child cannot be handed more descriptors here (os/exec's
// ExtraFiles is not supported on Windows).
func inherit(*exec.Cmd, *os.File) {}
