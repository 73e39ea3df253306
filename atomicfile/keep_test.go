package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// keepFixture writes n files old0.. in a new directory and returns it with
// an empty keep directory beside them.
func keepFixture(t *testing.T, n int) (dir, keep string) {
	t.Helper()
	dir = t.TempDir()
	keep = filepath.Join(dir, "keep")
	if err := os.Mkdir(keep, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("old"+strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, keep
}

// contents returns the sorted contents of dir's regular files.
func contents(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	slices.Sort(out)
	return out
}

// Each replaced file's old version ends linked in Keep (the rename freed
// nothing), new files are not kept, and Sweep removes exactly what was
// kept.
func TestBatchKeepsReplacedFiles(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run("syncfs="+strconv.FormatBool(whole), func(t *testing.T) {
			old := CheapFlush
			CheapFlush = func(int) bool { return whole }
			defer func() { CheapFlush = old }()
			dir, keep := keepFixture(t, 100)
			b := Batch{Keep: keep}
			b.Expect(110)
			for i := 0; i < 110; i++ {
				name := filepath.Join(dir, "f"+strconv.Itoa(i))
				add := b.Add
				if i >= 100 {
					add = b.AddNew
				}
				if err := add(name, []byte("new"+strconv.Itoa(i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if notWritten, err := b.Commit(nil); err != nil || len(notWritten) > 0 {
				t.Fatal(notWritten, err)
			}
			for i := 0; i < 110; i++ {
				if data, _ := os.ReadFile(filepath.Join(dir, "f"+strconv.Itoa(i))); string(data) != "new"+strconv.Itoa(i) {
					t.Fatalf("f%d = %q", i, data)
				}
			}
			var want []string
			for i := 0; i < 100; i++ {
				want = append(want, "old"+strconv.Itoa(i))
			}
			slices.Sort(want)
			if got := contents(t, keep); !slices.Equal(got, want) || b.kept != 100 {
				t.Fatalf("kept %d: %q", b.kept, got)
			}
			n, err := Sweep(keep)
			if err != nil || n != 100 {
				t.Fatalf("Sweep = %d, %v", n, err)
			}
			if got := contents(t, keep); len(got) != 0 {
				t.Fatalf("left after Sweep: %q", got)
			}
		})
	}
}

// A target found edited meanwhile (Unchanged false) is not replaced, and a
// sweep of its link in Keep, made before the check, leaves it whole.
func TestBatchKeepSweepSparesUnreplaced(t *testing.T) {
	dir, keep := keepFixture(t, 3)
	b := Batch{Keep: keep}
	for i := 0; i < 3; i++ {
		if err := b.Add(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edited := filepath.Join(dir, "f1")
	b.Unchanged = func(name string, _ fs.FileInfo) bool { return name != edited }
	notWritten, err := b.Commit(nil)
	if err != nil || !slices.Equal(notWritten, []string{edited}) {
		t.Fatal(notWritten, err)
	}
	if _, err := Sweep(keep); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(edited); err != nil || string(data) != "old1" {
		t.Fatalf("f1 after the sweep: %q, %v", data, err)
	}
	if got := contents(t, dir); !slices.Equal(got, []string{"new", "new", "old1"}) {
		t.Fatalf("dir holds %q", got)
	}
}

// Where Keep cannot take links — missing, a symbolic link to a directory,
// or on another file system — the batch renames as it always did and
// nothing is linked.
func TestBatchKeepUnusable(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string) string{
		"missing": func(t *testing.T, dir string) string { return filepath.Join(dir, "nowhere") },
		"symlink": func(t *testing.T, dir string) string {
			real := t.TempDir()
			link := filepath.Join(dir, "link")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			return link
		},
		"other file system": func(t *testing.T, dir string) string {
			other, err := os.MkdirTemp("/dev/shm", "strata-keep-")
			if err != nil {
				t.Skip("no /dev/shm:", err)
			}
			t.Cleanup(func() { os.RemoveAll(other) })
			var a, b syscall.Stat_t
			if syscall.Stat(dir, &a) != nil || syscall.Stat(other, &b) != nil || a.Dev == b.Dev {
				t.Skip("/dev/shm is on the test directory's file system")
			}
			return other
		},
	}
	for name, keepIn := range cases {
		t.Run(name, func(t *testing.T) {
			dir, _ := keepFixture(t, 5)
			keep := keepIn(t, dir)
			b := Batch{Keep: keep}
			for i := 0; i < 5; i++ {
				if err := b.Add(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("new"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if notWritten, err := b.Commit(nil); err != nil || len(notWritten) > 0 {
				t.Fatal(notWritten, err)
			}
			if got := contents(t, dir); !slices.Equal(got, []string{"new", "new", "new", "new", "new"}) {
				t.Fatalf("dir holds %q", got)
			}
			if b.kept != 0 {
				t.Fatalf("kept %d", b.kept)
			}
			if ents, _ := os.ReadDir(keep); len(ents) != 0 {
				t.Fatalf("%d entries in keep", len(ents))
			}
		})
	}
}

// Sweep removes files, not directories, and takes a missing directory or a
// symbolic link as nothing to sweep; HasKept agrees.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if n, err := Sweep(keep); n != 0 || err != nil || HasKept(keep) {
		t.Fatal(n, err)
	}
	os.Mkdir(keep, 0o700)
	os.Mkdir(filepath.Join(keep, "sub"), 0o700)
	os.WriteFile(filepath.Join(keep, "sub", "x"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(keep, "a"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "outside"), []byte("o"), 0o644)
	os.Symlink(filepath.Join(dir, "outside"), filepath.Join(keep, "l"))
	if !HasKept(keep) {
		t.Fatal("HasKept false with entries")
	}
	if n, err := Sweep(keep); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := os.Stat(filepath.Join(keep, "sub", "x")); err != nil {
		t.Fatal("a directory's content was swept:", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "outside")); err != nil {
		t.Fatal("a symbolic link's target was swept:", err)
	}
	link := filepath.Join(dir, "keeplink")
	os.Symlink(keep, link)
	os.WriteFile(filepath.Join(keep, "b"), []byte("b"), 0o644)
	if HasKept(link) || HasKept(filepath.Join(dir, "outside")) {
		t.Fatal("HasKept through a symbolic link, or of a file")
	}
	if n, err := Sweep(link); n != 0 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := os.Stat(filepath.Join(keep, "b")); err != nil {
		t.Fatal("swept through a symbolic link:", err)
	}
}
