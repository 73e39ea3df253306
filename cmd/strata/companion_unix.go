//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// execProcess replaces the process with path: same pid, same streams, so
// Claude Code (MCP) or the terminal (timeline) talks to strata-serve as it
// did to strata.
func execProcess(path string, argv []string) error {
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}

// detach puts a background child (the sweeper, cmd_sweep.go) in its own
// process group, so that a terminal's Ctrl-C aimed at strata spares it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
