package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command blocked in a read (here validate --hook, with stdin left open)
// ends at once on a second SIGINT (issue 16.5).
func TestSecondSignalEndsAtOnce(t *testing.T) {
	r := newProcRepo(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd := exec.Command("strata", "-C", r.dir, "validate", "--hook")
	cmd.Env, cmd.Stdin = r.env, pr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("exit %v, want 130", err)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 5s after a second SIGINT")
	}
}

// validate --hook with stdin left open does not hang the agent: it gives
// up after a bounded wait, says so on stderr and exits 0 (issue 16.5).
func TestValidateHookStdinLeftOpen(t *testing.T) {
	r := newProcRepo(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	pw.WriteString(`{"tool_input": {"file_path": "state/a.json"}`) // no closing brace, no EOF
	cmd := exec.Command("strata", "-C", r.dir, "validate", "--hook")
	var stderr strings.Builder
	cmd.Env, cmd.Stdin, cmd.Stderr = r.env, pr, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit %v, want 0", err)
		}
		if !strings.Contains(stderr.String(), "stdin still open") {
			t.Errorf("stderr %q", stderr.String())
		}
		t.Logf("gave up after %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("validate --hook still waiting on stdin after 10s")
	}
}
