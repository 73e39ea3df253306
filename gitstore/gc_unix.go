//go:build unix

package gitstore

import (
	"os/exec"
	"syscall"
)

// detach puts the child in its own process group so that a terminal's
// Ctrl-C aimed at strata does not stop a gc halfway.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
