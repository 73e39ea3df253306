//go:build unix

package gitstore

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/strata-dev/strata/gitperm"
)

// detach puts the child in its own process group so that a terminal's
// Ctrl-C aimed at strata does not stop a gc halfway.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// tryLock opens path, creating it, and takes an exclusive flock(2) on it
// without waiting: nil when another descriptor holds it (another process,
// or a child that inherited it) or the file cannot be opened. A file it
// creates gets its mode from sh.
func tryLock(path string, sh gitperm.Shared) *os.File {
	f, err := sh.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return f
}

// inherit makes lock the child's descriptor 3: the child holds the lock
// until it and every process it started with the descriptor have exited.
func inherit(cmd *exec.Cmd, lock *os.File) { cmd.ExtraFiles = []*os.File{lock} }
