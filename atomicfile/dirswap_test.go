package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// swapFixture makes root/work/g (holding old) and root/work/h, and root/git,
// a directory the batch must never write in: DirOK refuses it.
func swapFixture(t *testing.T, b *Batch) (work, git string) {
	t.Helper()
	root := t.TempDir()
	work, git = filepath.Join(root, "work"), filepath.Join(root, "git")
	for _, d := range []string{filepath.Join(work, "g"), filepath.Join(work, "h"), git} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(work, "g", "old"), filepath.Join(git, "old")} {
		if err := os.WriteFile(f, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	realGit, err := filepath.EvalSymlinks(git)
	if err != nil {
		t.Fatal(err)
	}
	b.DirOK = func(dir, real string) error {
		if real == realGit || strings.HasPrefix(real, realGit+string(filepath.Separator)) {
			return &fs.PathError{Op: "check", Path: dir, Err: fs.ErrPermission}
		}
		return nil
	}
	return work, git
}

// swapForLink renames work/g to work/gl and puts a symbolic link to git in
// its place, as a concurrent process can at any moment.
func swapForLink(t *testing.T, work, git string) {
	t.Helper()
	g := filepath.Join(work, "g")
	if err := os.Rename(g, filepath.Join(work, "gl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(git, g); err != nil {
		t.Fatal(err)
	}
}

// checkUntouched fails when anything but old, unchanged, is in dir.
func checkUntouched(t *testing.T, what, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "old" {
		t.Errorf("%s: %s holds %v, want old alone", what, filepath.Base(dir), ents)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "old")); string(data) != "old" {
		t.Errorf("%s: %s/old = %q", what, filepath.Base(dir), data)
	}
}

// A directory swapped for a symbolic link into a directory DirOK refuses,
// between Add and Commit, is not written through: its new and replaced
// files are left unwritten and returned, nothing appears where the link
// leads nor in the directory moved away, and the batch's other directories
// are written. Each way a batch makes and places its files is tried.
func TestBatchDirSwappedBeforeCommit(t *testing.T) {
	for _, c := range []struct {
		name         string
		whole, named bool
	}{{"unnamed", false, false}, {"named", false, true}, {"unnamed-syncfs", true, false}, {"named-syncfs", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.named {
				namedOnly(t)
			}
			b := Batch{whole: c.whole, Keep: t.TempDir()}
			b.Unchanged = func(string, fs.FileInfo) bool { return true }
			work, git := swapFixture(t, &b)
			names := []string{filepath.Join(work, "g", "new"), filepath.Join(work, "g", "old"), filepath.Join(work, "h", "new")}
			for i, name := range names {
				add := b.AddNew
				if i == 1 {
					add = b.Add
				}
				if err := add(name, []byte("strata's"+strconv.Itoa(i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			swapForLink(t, work, git)
			notWritten, err := b.Commit(nil)
			if err != nil || !slices.Equal(notWritten, names[:2]) {
				t.Errorf("Commit = %v, %v; want g/new and g/old not written", notWritten, err)
			}
			checkUntouched(t, "through the link", git)
			checkUntouched(t, "moved away", filepath.Join(work, "gl"))
			if data, _ := os.ReadFile(names[2]); string(data) != "strata's2" {
				t.Errorf("h/new = %q, want written", data)
			}
		})
	}
}

// A directory that already leads where DirOK refuses when its first file is
// added (swapped after the caller's own check) is refused by that Add,
// with DirOK's error, and nothing is written there.
func TestBatchDirRefusedAtAdd(t *testing.T) {
	var b Batch
	work, git := swapFixture(t, &b)
	swapForLink(t, work, git)
	err := b.AddNew(filepath.Join(work, "g", "new"), []byte("strata's"), 0o644)
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("AddNew = %v, want DirOK's refusal", err)
	}
	if notWritten, err := b.Commit(nil); err != nil || len(notWritten) != 0 {
		t.Fatalf("Commit = %v, %v", notWritten, err)
	}
	checkUntouched(t, "through the link", git)
}

// MkdirAll makes every missing directory, and none when ok refuses where
// the nearest existing one really is.
func TestMkdirAllJudgesTheParent(t *testing.T) {
	base := t.TempDir()
	if err := MkdirAll(filepath.Join(base, "a", "b", "c"), 0o755, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(base, "a", "b", "c")); err != nil || !st.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	refused := errors.New("refused")
	var judged string
	err := MkdirAll(filepath.Join(base, "a", "x", "y"), 0o755, func(real string) error { judged = real; return refused })
	if !errors.Is(err, refused) {
		t.Errorf("MkdirAll = %v, want ok's error", err)
	}
	if want, _ := filepath.EvalSymlinks(filepath.Join(base, "a")); judged != want {
		t.Errorf("judged %q, want the nearest existing directory %q", judged, want)
	}
	if _, err := os.Lstat(filepath.Join(base, "a", "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("made a directory after ok refused: %v", err)
	}
}
