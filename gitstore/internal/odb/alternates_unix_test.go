//go:build unix

package odb

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// An objects/info/alternates that is a named pipe (nobody writing to it) is
// no alternates file: a look-up answers not found instead of waiting for
// ever.
func TestAlternatesFIFONeverBlocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "objects")
	if err := os.MkdirAll(filepath.Join(dir, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "info", "alternates"), 0o644); err != nil {
		t.Skip(err)
	}
	db := Open(dir)
	defer db.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := db.Read(plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("read through a FIFO alternates: %v, want ErrNotFound", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO alternates file blocked the read")
	}
}
