//go:build !unix

package gitstore

import (
	"os"
	"os/exec"
)

func detach(cmd *exec.Cmd) {}

// tryLock opens path; without flock(2) here, nothing keeps two background
// repacks apart.
func tryLock(path string) *os.File {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	return f
}
