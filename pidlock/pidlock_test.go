package pidlock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/state"
)

// helperEnv names the lock file a re-executed test binary holds (the standard
// Go helper-process pattern).
const helperEnv = "STRATA_PIDLOCK_HELPER"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		l, err := Acquire(path, gitperm.Umask)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if err := l.Update(map[string]any{"changes": 7}); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute) // until killed
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// lockPath is where a watcher's lock goes in a fresh git directory (a HEAD
// makes it one: gitperm makes directories only inside one).
func lockPath(t *testing.T) string {
	t.Helper()
	gitDir := filepath.Join(t.TempDir(), ".git")
	if err := os.Mkdir(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(gitDir, "strata", "watch.lock")
}

func TestAcquireTwiceInOneProcess(t *testing.T) {
	path := lockPath(t)
	l, err := Acquire(path, gitperm.Umask)
	if err != nil {
		t.Fatal(err)
	}
	// flock belongs to the open file description: a second open of the same
	// file in the same process does not share the lock.
	_, err = Acquire(path, gitperm.Umask)
	if !errors.Is(err, state.ErrLocked) {
		t.Fatalf("second Acquire: %v, want ErrLocked", err)
	}
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != os.Getpid() {
		t.Fatalf("second Acquire: %#v, want a LockedError naming pid %d", err, os.Getpid())
	}
	want := fmt.Sprintf("another watcher is running (pid %d, since ", os.Getpid())
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want prefix %q", err, want)
	}

	info, held, err := Read(path)
	if err != nil || !held || info.PID != os.Getpid() || info.Since.IsZero() {
		t.Fatalf("Read = %+v, %v, %v; want held by pid %d", info, held, err, os.Getpid())
	}

	for range 2 {
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if _, held, err := Read(path); err != nil || held {
		t.Fatalf("Read after Release: held %v, %v", held, err)
	}
	if err := l.Update(map[string]any{"x": 1}); err == nil {
		t.Error("Update after Release succeeded")
	}
	l2, err := Acquire(path, gitperm.Umask)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

func TestReadMissing(t *testing.T) {
	info, held, err := Read(filepath.Join(t.TempDir(), "nope.lock"))
	if err != nil || held || info.PID != 0 {
		t.Fatalf("Read = %+v, %v, %v; want not held", info, held, err)
	}
}

func TestUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "watch.lock")
	l, err := Acquire(path, gitperm.Umask)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	type status struct {
		Changes  int `json:"changes"`
		Rejected int `json:"rejected,omitempty"`
	}
	if err := l.Update(status{Changes: 3, Rejected: 1}); err != nil {
		t.Fatal(err)
	}
	if err := l.Update(status{Changes: 4}); err != nil {
		t.Fatal(err)
	}
	info, held, err := Read(path)
	if err != nil || !held {
		t.Fatalf("Read: held %v, %v", held, err)
	}
	if string(info.Extra) != `{"changes":4}` {
		t.Errorf("extra = %s, want changes 4 only (the status is replaced, not merged)", info.Extra)
	}
	if info.PID != os.Getpid() || info.Host != l.Info().Host {
		t.Errorf("Read = %+v, want %+v", info, l.Info())
	}
}

// TestReadDuringUpdates checks that a reader never sees a torn Info while the
// holder keeps rewriting it, and that Read's probe never makes Acquire fail
// for a holder that is not there.
func TestReadDuringUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "watch.lock")
	l, err := Acquire(path, gitperm.Umask)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 300 {
			pad := strings.Repeat("x", i%50) // vary the length
			if err := l.Update(map[string]any{"n": i, "pad": pad}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 300 {
		info, held, err := Read(path)
		if err != nil || !held || info.PID != os.Getpid() {
			t.Fatalf("Read = %+v, %v, %v", info, held, err)
		}
	}
	wg.Wait()
	l.Release()

	// Probes racing with Acquire on a free lock.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			Read(path)
		}
	}()
	for range 20 {
		l, err := Acquire(path, gitperm.Umask)
		if err != nil {
			t.Fatalf("Acquire of a free lock while probed: %v", err)
		}
		l.Release()
	}
	<-done
}

// TestHolderKilled has a child process hold the lock, checks that it is
// reported, kills the child with SIGKILL (no chance to clean up) and checks
// that the lock is free again.
func TestHolderKilled(t *testing.T) {
	path := lockPath(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	child := cmd.Process.Pid

	info, held, err := Read(path)
	if err != nil || !held || info.PID != child || string(info.Extra) != `{"changes":7}` {
		t.Fatalf("Read = %+v, %v, %v; want held by pid %d with changes 7", info, held, err, child)
	}
	_, err = Acquire(path, gitperm.Umask)
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d, since ", child)) {
		t.Fatalf("Acquire while the child holds it: %v", err)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	if _, held, err := Read(path); err != nil || held {
		t.Fatalf("Read after the holder died: held %v, %v", held, err)
	}
	l, err := Acquire(path, gitperm.Umask)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	defer l.Release()
	if info, held, _ := Read(path); !held || info.PID != os.Getpid() || info.Extra != nil {
		t.Fatalf("Read = %+v, %v; want held by us with no stale status", info, held)
	}
}

// A symbolic link planted where a lock file goes is never followed: its
// target, outside, is not created, and the lock is refused.
func TestHoldRefusesLink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "made-by-strata")
	lock := filepath.Join(dir, "x.lock")
	if err := os.Symlink(outside, lock); err != nil {
		t.Fatal(err)
	}
	if release, err := Hold(lock, gitperm.Umask, true, 0); err == nil {
		release()
		t.Fatal("a lock through a link was taken")
	}
	if _, err := os.Lstat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link's target was made: %v", err)
	}
}
