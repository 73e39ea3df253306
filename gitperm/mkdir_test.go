package gitperm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestMkdirAllOnlyInGitDir: directories are made inside an existing git
// directory (one holding HEAD), never where the git directory was deleted
// (rm -rf .git, or the whole work tree, under a running watcher): a file
// opened there is not created, nor any folder on its way.
func TestMkdirAllOnlyInGitDir(t *testing.T) {
	root := t.TempDir()
	gitDir := filepath.Join(root, ".git")
	lock := filepath.Join(gitDir, "strata", "sync-journal.lock")
	for _, sh := range []Shared{Umask, Group} {
		if err := sh.MkdirAll(filepath.Join(gitDir, "objects", "ab")); !errors.Is(err, ErrNoGitDir) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("MkdirAll with no git directory: %v, want ErrNoGitDir", err)
		}
		if f, err := sh.OpenFile(lock, os.O_RDWR); err == nil {
			f.Close()
			t.Errorf("OpenFile with no git directory made %s", lock)
		}
		if _, err := os.Lstat(gitDir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s made: %v", gitDir, err)
		}
	}
	if err := os.Mkdir(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Umask.MkdirAll(filepath.Join(gitDir, "objects", "ab")); err != nil {
		t.Fatal(err)
	}
	f, err := Umask.OpenFile(lock, os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
