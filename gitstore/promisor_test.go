package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// In a partial clone whose promisor remote is gone, the first missing
// object costs one git cat-file; the next ones are not asked for (each
// could wait for a network).
func TestPromisorAskedOnceWhenDown(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	base := realPath(t, t.TempDir())
	remote := filepath.Join(base, "remote.git")
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, src, true)
	var blobs []string
	for _, c := range []string{"one\n", "two\n", "three\n"} {
		writeFile(t, filepath.Join(src, "f.txt"), c)
		runGit(t, src, "add", "f.txt")
		runGit(t, src, "commit", "-q", "-m", c)
		blobs = append(blobs, runGit(t, src, "rev-parse", "HEAD:f.txt"))
	}
	runGit(t, base, "clone", "-q", "--bare", src, remote)
	runGit(t, remote, "config", "uploadpack.allowfilter", "true")
	clone := filepath.Join(base, "clone")
	runGit(t, base, "-c", "protocol.file.allow=always", "clone", "-q", "--no-checkout", "--filter=blob:none", "file://"+remote, clone)
	if err := os.RemoveAll(remote); err != nil { // the promisor remote is gone
		t.Fatal(err)
	}

	// Count the git processes strata starts, through a git on PATH that
	// logs its arguments and runs the real one.
	shim := filepath.Join(base, "bin")
	logFile := filepath.Join(base, "git.log")
	writeFile(t, filepath.Join(shim, "git"), "#!/bin/sh\necho \"$*\" >> "+logFile+"\nexec "+realGit+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(shim, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))

	s, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, b := range blobs {
		_, err := s.ReadBlobLimit(b, 1<<20)
		if err == nil {
			t.Fatalf("blob %s read though the promisor remote is gone", b)
		}
		// recorded, yet not fetchable: an I/O failure, not "not recorded"
		if errors.Is(err, state.ErrNotFound) || !strings.Contains(err.Error(), "promisor remote") {
			t.Fatalf("blob %s: %v, want a failure naming the promisor remote", b, err)
		}
	}
	data, _ := os.ReadFile(logFile)
	if n := strings.Count(string(data), "cat-file"); n != 1 {
		t.Fatalf("git cat-file ran %d times for 3 missing objects, want 1:\n%s", n, data)
	}
}

// A promisor remote that hangs (a dead network link) holds the wait to
// PromisorTimeout: git cat-file is killed with the git fetch it started and
// that fetch's transport, which held strata's pipe open for as long as it
// hung, re-parented, after git cat-file alone was killed (attack31 F5).
func TestPromisorHangBounded(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to find the processes git started")
	}
	const hang = "sleep 913.417" // the marked sleep standing for the dead link
	clone, blob := hangingPartialClone(t, hang)
	old := PromisorTimeout
	PromisorTimeout = 300 * time.Millisecond
	defer func() { PromisorTimeout = old }()
	// a liveness bound, far above the timeout and the wait delay
	if err := readWithin(t, clone, blob, Options{}, 60*time.Second); err == nil || !strings.Contains(err.Error(), "promisor remote") {
		t.Fatalf("read: %v, want a failure naming the promisor remote", err)
	}
	if left := runningWith(hang); len(left) > 0 {
		t.Fatalf("processes git started outlived the kill: %v", left) // killed at the test's end
	}
}

// runningWith lists the processes whose command line holds marker.
func runningWith(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(raw), "\x00", " "), marker) {
			out = append(out, pid)
		}
	}
	return out
}

// hangingPartialClone makes a partial clone lacking one blob, whose
// promisor remote's transport hangs (a marked sleep stands for a dead
// link), and returns the clone, the blob and the marker.
func hangingPartialClone(t *testing.T, marker string) (clone, blob string) {
	t.Helper()
	base := realPath(t, t.TempDir())
	remote := filepath.Join(base, "remote.git")
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, src, true)
	writeFile(t, filepath.Join(src, "f.txt"), "one\n")
	runGit(t, src, "add", "f.txt")
	runGit(t, src, "commit", "-q", "-m", "one")
	blob = runGit(t, src, "rev-parse", "HEAD:f.txt")
	runGit(t, base, "clone", "-q", "--bare", src, remote)
	runGit(t, remote, "config", "uploadpack.allowfilter", "true")
	clone = filepath.Join(base, "clone")
	runGit(t, base, "-c", "protocol.file.allow=always", "clone", "-q", "--no-checkout", "--filter=blob:none", "file://"+remote, clone)
	runGit(t, clone, "config", "remote.origin.uploadpack", marker+"; git-upload-pack")
	t.Setenv("GIT_ALLOW_PROTOCOL", "file")
	t.Cleanup(func() {
		for _, pid := range runningWith(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return clone, blob
}

// readWithin reads blob from a Store opened on clone with o, failing the
// test when the read takes more than limit (a liveness bound) or succeeds.
func readWithin(t *testing.T, clone, blob string, o Options, limit time.Duration) error {
	t.Helper()
	s, err := OpenWith(clone, o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.ReadBlobLimit(blob, 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		s.Close()
		return err
	case <-time.After(limit):
		t.Fatalf("the read still waits after %v", limit) // s is left: Close would wait for the read
	}
	return nil
}

// A Store opened with a shorter promisor bound (a hook's: Claude Code
// kills a hook after 60 s) waits that long, not PromisorTimeout
// (attack31b C).
func TestPromisorOptionBound(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to find the processes git started")
	}
	clone, blob := hangingPartialClone(t, "sleep 913.418")
	old := PromisorTimeout
	PromisorTimeout = 40 * time.Second // the default bound is not reached here
	defer func() { PromisorTimeout = old }()
	err := readWithin(t, clone, blob, Options{PromisorTimeout: 300 * time.Millisecond}, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "promisor remote") {
		t.Fatalf("read: %v, want a failure naming the promisor remote", err)
	}
}

// A fetch cut by its bound is remembered across Stores (processes) for
// PromisorMemory on strata's clock: the next Store fetches nothing and
// says why; once the note is older, the next one asks git again, and a
// fetch that succeeds removes the note (attack31b C: every command waited
// the two minutes again).
func TestPromisorDownRemembered(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to find the processes git started")
	}
	const marker = "sleep 913.419"
	clone, blob := hangingPartialClone(t, marker)
	old := PromisorTimeout
	PromisorTimeout = 300 * time.Millisecond
	defer func() { PromisorTimeout = old }()
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	oldNow := now
	now = func() time.Time { return at }
	defer func() { now = oldNow }()

	// count the git cat-file runs through a git on PATH that logs them
	shim := filepath.Join(t.TempDir(), "bin")
	logFile := filepath.Join(filepath.Dir(shim), "git.log")
	writeFile(t, filepath.Join(shim, "git"), "#!/bin/sh\necho \"$*\" >> "+logFile+"\nexec "+realGit+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(shim, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
	catFiles := func() int {
		data, _ := os.ReadFile(logFile)
		return strings.Count(string(data), "cat-file")
	}

	note := filepath.Join(clone, ".git", "strata", "promisor-down")
	if err := readWithin(t, clone, blob, Options{}, 60*time.Second); err == nil || !strings.Contains(err.Error(), "promisor remote") {
		t.Fatalf("first read: %v, want a failure naming the promisor remote", err)
	}
	if data, err := os.ReadFile(note); err != nil || strings.TrimSpace(string(data)) != strconv.FormatInt(at.Unix(), 10) {
		t.Fatalf("note after a fetch cut by its bound: %q, %v; want the time of the failure", data, err)
	}
	if n := catFiles(); n != 1 {
		t.Fatalf("git cat-file ran %d times, want 1", n)
	}

	// 9 minutes later, another process: decided at once, with the reason
	at = at.Add(9 * time.Minute)
	err = readWithin(t, clone, blob, Options{}, 60*time.Second)
	if err == nil || !strings.Contains(err.Error(), "promisor remote") || !strings.Contains(err.Error(), note) {
		t.Fatalf("read within the memory: %v, want a failure naming the promisor remote and the note", err)
	}
	if errors.Is(err, state.ErrNotFound) {
		t.Fatalf("read within the memory: %v is \"not recorded\"; want an I/O failure", err)
	}
	if n := catFiles(); n != 1 {
		t.Fatalf("git cat-file ran %d times, want 1: the note was not honoured", n)
	}

	// past the memory, with the remote answering again: asked, fetched,
	// and the note removed
	at = at.Add(PromisorMemory)
	runGit(t, clone, "config", "--unset", "remote.origin.uploadpack")
	PromisorTimeout = 60 * time.Second // a fetch that works, on a loaded machine
	if err := readWithin(t, clone, blob, Options{}, 60*time.Second); err != nil {
		t.Fatalf("read after the memory, the remote back: %v", err)
	}
	if n := catFiles(); n != 2 {
		t.Fatalf("git cat-file ran %d times, want 2", n)
	}
	if _, err := os.Lstat(note); !os.IsNotExist(err) {
		t.Fatalf("note left after a fetch that succeeded: %v", err)
	}
}
