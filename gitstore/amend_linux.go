package gitstore

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// nearestGit returns the command line of the nearest git process above
// this one (at most 8 generations up), nil when none is found.
func nearestGit() []string {
	pid := os.Getppid()
	for n := 0; n < 8 && pid > 1; n++ {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return nil
		}
		argv := strings.Split(string(bytes.TrimRight(raw, "\x00")), "\x00")
		if isGit(argv) {
			return argv
		}
		if pid = parentOf(pid); pid <= 0 {
			return nil
		}
	}
	return nil
}

// parentOf reads the parent of process pid from /proc/<pid>/stat, whose
// second field (the command name, in parentheses) may hold spaces and
// parentheses itself: the fields after the last ')' are read.
func parentOf(pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(raw, ')')
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
