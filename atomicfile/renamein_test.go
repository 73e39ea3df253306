package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRenameInJudgesTheDirectoryFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	no := errors.New("refused")
	if err := RenameIn(dir, "a", "b", func(string, string) error { return no }); err != no {
		t.Fatalf("refused rename: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Fatal("renamed though refused")
	}
	var judged string
	if err := RenameIn(dir, "a", "b", func(_, real string) error { judged = real; return nil }); err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(dir); judged != want {
		t.Fatalf("judged %q, want %q", judged, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
}
