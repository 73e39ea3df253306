// Package proc answers whether a process still runs, for the lock and
// temp-file names that carry the id of the strata process that made them.
package proc

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// Running reports whether process pid exists (signal 0 delivers nothing;
// EPERM means it exists under another user). This process is running.
func Running(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return true // FindProcess found it; Signal(0) is not supported there
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
