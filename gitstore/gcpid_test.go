//go:build unix

package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// deadProcess returns this host's name and the id of a process that has
// exited (the test is skipped if another process has taken the id again).
func deadProcess(t *testing.T) (host string, pid int) {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid
	if syscall.Kill(pid, 0) == nil {
		t.Skip("the exited process's id was taken again")
	}
	return host, pid
}

// gc.pid stops strata's repacks only while it names a gc that runs, as git
// itself reads it: a live process of this host, or any process of another
// host, in a file at most 12 hours old. A gc.pid left by a killed gc (a dead
// process, or a file older than that) no longer stops them.
func TestGCPidAsGitReadsIt(t *testing.T) {
	host, deadPid := deadProcess(t)
	live := strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		name, content string
		age           time.Duration
		fifo          bool
		want          bool
	}{
		{name: "none", want: false},
		{name: "live process, this host", content: live + " " + host, want: true},
		{name: "live process, git's trailing newline", content: live + " " + host + "\n", want: true},
		{name: "dead process, this host", content: strconv.Itoa(deadPid) + " " + host, want: false},
		{name: "live process, 13 hours old", content: live + " " + host, age: 13 * time.Hour, want: false},
		{name: "another host", content: "4242 not-" + host, want: true},
		{name: "another host, 13 hours old", content: "4242 not-" + host, age: 13 * time.Hour, want: false},
		{name: "garbage", content: "not a pid", want: false},
		{name: "pid 0", content: "0 " + host, want: false},
		{name: "a named pipe", fifo: true, want: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			common := t.TempDir()
			name := filepath.Join(common, "gc.pid")
			switch {
			case c.fifo:
				if err := syscall.Mkfifo(name, 0o644); err != nil {
					t.Skip(err)
				}
			case c.content != "":
				if err := os.WriteFile(name, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
				if c.age > 0 {
					then := time.Now().Add(-c.age)
					if err := os.Chtimes(name, then, then); err != nil {
						t.Fatal(err)
					}
				}
			}
			done := make(chan bool, 1)
			go func() { done <- gcRunning(common) }()
			select {
			case got := <-done:
				if got != c.want {
					t.Errorf("gcRunning = %v, want %v", got, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("gcRunning blocked")
			}
		})
	}
}

// A gc.pid left by a killed gc no longer stops the repack PackInterval
// records start.
func TestRepackDespiteStaleGCPid(t *testing.T) {
	oldP, oldG := PackInterval, GCInterval
	PackInterval, GCInterval = 10, 1000
	defer func() { PackInterval, GCInterval = oldP, oldG }()
	host, deadPid := deadProcess(t)
	r := newTestRepo(t, "plain")
	if err := os.WriteFile(filepath.Join(r.common, "gc.pid"), []byte(strconv.Itoa(deadPid)+" "+host), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	before := repackStarted.Load()
	for i := 0; i < 10; i++ {
		mustRecord(t, s, change("d/f.json", itoa(int64(i)), t0))
	}
	WaitHousekeeping()
	if n := repackStarted.Load() - before; n != 1 {
		t.Fatalf("repack started %d times with a stale gc.pid, want 1", n)
	}
}

// A gc that does run (git's thresholds met: gc.autoPackLimit = 1 here, two
// packs written) is the very process strata waits for, so the repack owed
// after it starts when it ends and rolls up what was recorded meanwhile.
// Left to git's default (gc.autoDetach), the gc forked itself away at once
// and that repack found its gc.pid and was skipped.
func TestRepackFollowsRunningGC(t *testing.T) {
	r, s := housekeepingRepo(t, 1000, 8)
	runGit(t, r.main, "config", "gc.autoPackLimit", "1")
	packs, gcs := repackStarted.Load(), gcStarted.Load()
	for b := 0; b < 2; b++ { // two batches of four: two packs, and the count reaches 8
		var chs []state.Change
		for i := 0; i < 4; i++ {
			chs = append(chs, change("d/f"+itoa(int64(i))+".json", itoa(int64(b)), t0))
		}
		if _, err := s.RecordEach(chs); err != nil {
			t.Fatal(err)
		}
	}
	WaitHousekeeping()
	if n := gcStarted.Load() - gcs; n != 1 {
		t.Fatalf("gc started %d times, want 1", n)
	}
	if n := repackStarted.Load() - packs; n != 1 {
		t.Fatalf("repack started %d times after a gc that ran, want 1 (skipped: the gc was still running)", n)
	}
	if _, err := os.Stat(filepath.Join(r.common, "gc.pid")); !os.IsNotExist(err) {
		t.Fatalf("gc.pid after the housekeeping ended: %v", err)
	}
	fsck(t, r.main)
}
