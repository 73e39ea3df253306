// Package proc reads what the system says of a process: whether it still
// runs (for the lock and temp-file names that carry the id of the strata
// process that made them), its name, its command line and its parent.
package proc

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
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

// Name is what the system says process pid runs (/proc/PID/comm), or ""
// when it cannot tell.
func Name(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// MayRunStrata reports whether process pid may be a strata process: its
// name says strata (or a test binary of strata's packages), or it cannot
// be told. A lock naming a pid that runs something else is an earlier
// strata's, its pid reused since.
func MayRunStrata(pid int) bool {
	name := Name(pid)
	return name == "" || strings.Contains(name, "strata") || strings.HasSuffix(name, ".test")
}

// Args is the command line of process pid (/proc/PID/cmdline), nil when it
// cannot be read (another system, a process gone).
func Args(pid int) []string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// Parent is the parent of process pid, read from /proc/PID/stat, whose
// second field (the command name, in parentheses) may hold spaces and
// parentheses itself: the fields after the last ')' are read. It is -1
// when it cannot be read.
func Parent(pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}
