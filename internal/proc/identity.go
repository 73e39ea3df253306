package proc

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// Identity tells one process from every other that ran on this machine:
// its pid means something only in its pid namespace (a devcontainer and
// its host sharing a repository through a bind mount each have their
// own), and only until the pid is reused (by a later process, started at
// another time, or after a reboot). PidNS, Boot and Start are empty or 0
// when they cannot be read (another system than Linux, a /proc that is
// not this process's namespace's).
type Identity struct {
	Pid   int
	PidNS string // the inode of /proc/self/ns/pid, in decimal
	Boot  string // /proc/sys/kernel/random/boot_id
	Start uint64 // /proc/PID/stat's starttime: clock ticks after boot
}

// Known reports whether id names its namespace, boot and start time, so
// that Gone can judge it.
func (id Identity) Known() bool {
	return id.Pid > 0 && id.PidNS != "" && id.Boot != "" && id.Start > 0
}

// PidNS is the inode of this process's pid namespace, in decimal, read
// once; "" when it cannot be read, or /proc is another pid namespace's.
// Two processes with the same PidNS see each other under the same pids.
func PidNS() string { return pidNS() }

var pidNS = sync.OnceValue(func() string {
	// /proc mounted for another pid namespace (the host's, in a container)
	// would answer for other processes than the pids this one sees: then
	// nothing is said
	if link, err := os.Readlink("/proc/self"); err != nil || link != strconv.Itoa(os.Getpid()) {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	ino, ok := strings.CutPrefix(ns, "pid:[")
	if ino, ok = strings.CutSuffix(ino, "]"); !ok || !digits(ino) {
		return ""
	}
	return ino
})

var self = sync.OnceValue(func() Identity {
	id := Identity{Pid: os.Getpid()}
	ino := PidNS()
	if ino == "" {
		return id
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return id
	}
	b := strings.TrimSpace(string(boot))
	if b == "" || strings.ContainsFunc(b, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return id
	}
	start, ok := StartTime(id.Pid)
	if !ok {
		return id
	}
	id.PidNS, id.Boot, id.Start = ino, b, start
	return id
})

// Self is this process's Identity, read once.
func Self() Identity { return self() }

// StartTime is when process pid started, in clock ticks after boot: the
// 22nd field of /proc/PID/stat (read after the last ')', as the command
// name in parentheses may hold spaces and parentheses itself). ok is false
// when it cannot be read.
func StartTime(pid int) (ticks uint64, ok bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(raw[i+1:])) // from the 3rd field, state
	if len(f) < 20 {
		return 0, false
	}
	ticks, err = strconv.ParseUint(f[19], 10, 64)
	return ticks, err == nil && ticks > 0
}

// Gone reports whether the process id names provably runs no more: id
// is known and of this process's pid namespace and boot, and no process
// has its pid, or the one that has it started at another time (the pid
// reused since). Whatever cannot be told so is not gone: a process of
// another namespace (a container's, the host's) or of another machine
// sharing the repository may run under that pid there.
func Gone(id Identity) bool {
	me := Self()
	if !id.Known() || !me.Known() || id.PidNS != me.PidNS || id.Boot != me.Boot {
		return false
	}
	if !Running(id.Pid) {
		return true
	}
	start, ok := StartTime(id.Pid)
	return ok && start != id.Start
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
