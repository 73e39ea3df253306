package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestBatchCommitsInOrderAndSkips(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	for i := 0; i < 150; i++ { // more than one sync group
		name := filepath.Join(dir, "f"+strconv.Itoa(i))
		if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(name, []byte("new"+strconv.Itoa(i)), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "f0")); string(data) != "old" {
		t.Fatalf("replaced before Commit: %q", data)
	}
	b.Skip(filepath.Join(dir, "f7"))
	mids := 0
	if _, err := b.Commit(func() {
		mids++
		// halfway: the first half is in place, the second not yet
		if data, _ := os.ReadFile(filepath.Join(dir, "f0")); string(data) != "new0" {
			t.Errorf("f0 at mid = %q", data)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "f149")); string(data) != "old" {
			t.Errorf("f149 at mid = %q", data)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if mids != 1 {
		t.Fatalf("mid called %d times", mids)
	}
	for i := 0; i < 150; i++ {
		want := "new" + strconv.Itoa(i)
		if i == 7 {
			want = "old"
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "f"+strconv.Itoa(i))); string(data) != want {
			t.Fatalf("f%d = %q, want %q", i, data, want)
		}
	}
	if st, _ := os.Stat(filepath.Join(dir, "f1")); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 150 {
		t.Fatalf("%d entries, want 150 (no temp left)", len(ents))
	}
}

func TestBatchAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	if err := b.Add(filepath.Join(dir, "a"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
}

// Leftovers removes the temp files of a process that is gone, not those of
// a running one, nor other files.
func TestLeftovers(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1)")
	}
	dead := cmd.Process.Pid
	files := map[string]bool{ // name -> removed
		Prefix + "a.json-" + strconv.Itoa(dead) + "-123":        true,
		Prefix + "x-y.json-" + strconv.Itoa(dead) + "-9":        true,
		Prefix + "a.json-" + strconv.Itoa(os.Getpid()) + "-123": false,
		Prefix + "a.json-456789":                                false, // WriteTemp's, no pid
		"a.json":                                                false,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := Leftovers(dir); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if removed != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", strings.TrimPrefix(name, Prefix), os.IsNotExist(err), removed)
		}
	}
}
