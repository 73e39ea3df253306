//go:build unix

package main

import (
	"fmt"
	"os"
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
