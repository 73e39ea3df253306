package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe at a .gitignore blocks git check-ignore on it for ever, as
// it blocks git's own commands: the question sync asks before it pushes
// fails past AskTimeout with a line that says so, never hangs (attack40e
// H2: the sync, and the watcher's periodic one, hung silently).
func TestCheckIgnoreFifoBounded(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writeFile(t, filepath.Join(dir, ".claude", "a.json"), "{}")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	was := AskTimeout
	AskTimeout = time.Second
	t.Cleanup(func() { AskTimeout = was })
	done := make(chan error, 1)
	go func() { _, err := s.CheckIgnore(context.Background(), []string{".claude/a.json"}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "gave no answer within") {
			t.Fatalf("CheckIgnore: %v, want the timeout named", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("CheckIgnore hangs on a named pipe at .gitignore")
	}
	_ = os.Remove(filepath.Join(dir, ".gitignore"))
}
