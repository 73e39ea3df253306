//go:build linux

package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestKernelAtLeast(t *testing.T) {
	for rel, want := range map[string]bool{
		"6.18.44-fc-v669": true, "5.8.0": true, "5.10": true, "5.7.19-x": false,
		"4.19.0": false, "10.0": true, "": false, "weird": false,
	} {
		if got := kernelAtLeast(rel, 5, 8); got != want {
			t.Errorf("%q: %v, want %v", rel, got, want)
		}
	}
}

// A batch of WholeFrom files or more is made durable by syncfs, a smaller
// one file by file; either way every file is in place and no descriptor is
// left open.
func TestBatchWholeFileSystem(t *testing.T) {
	if !syncFSOK() {
		t.Skip("kernel before 5.8: no syncfs error reporting")
	}
	was := FewDirty
	FewDirty = 1 << 62 // whatever other programs are writing
	defer func() { FewDirty = was }()
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	for _, n := range []int{WholeFrom - 1, WholeFrom, 3 * WholeFrom} {
		dir := t.TempDir()
		before := fds()
		var b Batch
		for i := 0; i < n; i++ {
			if err := b.Add(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if want := n >= WholeFrom; b.whole != want {
			t.Errorf("%d files: syncfs %v, want %v", n, b.whole, want)
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		if after := fds(); after != before {
			t.Errorf("%d files: %d descriptors open after Commit, %d before", n, after, before)
		}
		for i := 0; i < n; i++ {
			if data, _ := os.ReadFile(filepath.Join(dir, "f"+strconv.Itoa(i))); string(data) != "v"+strconv.Itoa(i) {
				t.Fatalf("f%d = %q", i, data)
			}
		}
		if ents, _ := os.ReadDir(dir); len(ents) != n {
			t.Errorf("%d entries, want %d (no temp left)", len(ents), n)
		}
	}
}

// Abort of a batch past WholeFrom removes its temp files and closes its
// descriptors.
func TestBatchWholeAbort(t *testing.T) {
	dir := t.TempDir()
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	before := fds()
	var b Batch
	for i := 0; i < WholeFrom+5; i++ {
		if err := b.Add(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files", len(ents))
	}
	if after := fds(); after != before {
		t.Errorf("%d descriptors open after Abort, %d before", after, before)
	}
}

// With more unwritten data on the system than FewDirty, a large batch keeps
// its per-file fsyncs rather than wait for other programs' writes.
func TestBatchManyDirtyKeepsFsync(t *testing.T) {
	was := FewDirty
	FewDirty = -1
	defer func() { FewDirty = was }()
	dir := t.TempDir()
	var b Batch
	for i := 0; i < 2*WholeFrom; i++ {
		if err := b.Add(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b.whole {
		t.Error("syncfs chosen with much unwritten data")
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2*WholeFrom {
		t.Errorf("%d entries", len(ents))
	}
}

func TestFewDirtyReadsMeminfo(t *testing.T) {
	was := FewDirty
	defer func() { FewDirty = was }()
	FewDirty = 0
	if fewDirty() {
		t.Error("fewDirty true by default (syncfs is off)")
	}
	FewDirty = 1 << 62
	if !fewDirty() {
		t.Error("fewDirty false under an unbounded limit: /proc/meminfo not read")
	}
	FewDirty = -1
	if fewDirty() {
		t.Error("fewDirty true under a negative limit")
	}
}
