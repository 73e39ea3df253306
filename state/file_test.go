package state

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadRegular returns a regular file's bytes whatever its size, refuses one
// over the limit, and refuses without blocking what is not a regular file.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 100_000} {
		name := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("ab\n"), n)[:n]
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRegular(name, 0, false)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d, %v", n, len(got), err)
		}
		if got, err := ReadRegular(name, int64(n), false); err != nil || len(got) != n {
			t.Fatalf("%d bytes at a limit of %d: read %d, %v", n, n, len(got), err)
		}
		if n > 1 { // (a limit of 0 is no limit)
			_, err := ReadRegular(name, int64(n-1), false)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("%d bytes at a limit of %d: %v, want ErrTooLarge", n, n-1, err)
			}
		}
	}
	if _, err := ReadRegular(filepath.Join(dir, "none"), 0, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadRegular(dir, 0, false); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "f"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegular(link, 0, false); !errors.Is(err, ErrNotRegular) {
		t.Errorf("symbolic link, not followed: %v", err)
	}
	if got, err := ReadRegular(link, 0, true); err != nil || len(got) != 100_000 {
		t.Errorf("symbolic link, followed: %d bytes, %v", len(got), err)
	}
}

// A file larger than fstat said when it was opened (one that grew, or a
// /proc file, which says 0) is read to its end, and refused past the limit.
func TestReadRegularGrown(t *testing.T) {
	const name = "/proc/self/status"
	if _, err := os.Stat(name); err != nil {
		t.Skip("no /proc here")
	}
	got, err := ReadRegular(name, 0, true)
	if err != nil || !bytes.HasPrefix(got, []byte("Name:")) || !bytes.Contains(got, []byte("\nPid:")) {
		t.Fatalf("read %q, %v", got, err)
	}
	if _, err := ReadRegular(name, 10, true); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "grew past 10 bytes") {
		t.Fatalf("past the limit: %v, want ErrTooLarge", err)
	}
}
