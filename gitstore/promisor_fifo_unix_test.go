//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO where the promisor note is read never blocks: every hook reads the
// note, and a read blocked on a FIFO no writer opens hangs it for good.
func TestPromisorNoteFIFO(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.MkdirAll(filepath.Dir(s.promisorDownFile()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(s.promisorDownFile(), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan bool, 1)
	go func() { done <- s.promisorRecentlyDown() }()
	select {
	case down := <-done:
		if down {
			t.Fatal("a FIFO read as a note of a fetch cut by its bound")
		}
	case <-time.After(20 * time.Second): // a liveness bound
		t.Fatal("reading the promisor note blocks on a FIFO")
	}
}
