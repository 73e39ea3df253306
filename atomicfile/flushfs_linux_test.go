package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestKernelAtLeast(t *testing.T) {
	if !kernelAtLeast(2, 6) {
		t.Error("the running kernel is older than 2.6?")
	}
	if kernelAtLeast(999, 0) {
		t.Error("the running kernel is 999.0 or later?")
	}
	for s, want := range map[string]int{"18": 18, "8-rc1": 8, "44-fc-v669": 44, "": -1, "x1": -1} {
		if got := leadingInt(s); got != want {
			t.Errorf("leadingInt(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestUnwritten(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if n := unwritten(); n < 0 || n >= 1<<62 {
		t.Errorf("unwritten() = %d: /proc/meminfo not understood", n)
	}
}

// watch opens one directory per file system that syncfs makes durable (and
// none for one it does not), and flush syncs and closes them.
func TestFSFlush(t *testing.T) {
	var f fsFlush
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		for range 2 { // the second time: seen, nothing more opened
			ok, err := f.watch(d)
			if err != nil {
				t.Fatal(err)
			}
			if ok != flushable(d) {
				t.Fatalf("watch(%s) = %v, flushable says %v", d, ok, flushable(d))
			}
		}
	}
	if want := 0; flushable(dirs[0]) {
		want = 1 // two temp dirs, one file system
		if len(f.fds) != want {
			t.Fatalf("%d directories open, want %d", len(f.fds), want)
		}
	}
	if err := f.flush(); err != nil {
		t.Fatal(err)
	}
	if len(f.fds) != 0 {
		t.Errorf("%d left open", len(f.fds))
	}
	if _, err := f.watch("/no/such/dir"); err == nil {
		t.Error("watch of a missing directory succeeded")
	}
}

// Local disk file systems are flushed whole; /proc (like a network or FUSE
// file system) is not.
func TestFlushable(t *testing.T) {
	if flushable("/proc") {
		t.Error("/proc is flushable")
	}
	if d := "/dev/shm"; isTmpfs(d) && !flushable(d) {
		t.Errorf("%s (tmpfs) is not flushable", d)
	}
}

func isTmpfs(dir string) bool {
	var sf unix.Statfs_t
	return unix.Statfs(dir, &sf) == nil && uint32(sf.Type) == unix.TMPFS_MAGIC
}

// Expect chooses the flush of the whole file system only for a large batch,
// on a kernel whose syncfs reports write-back errors, when the machine
// holds little unwritten data of other programs.
func TestBatchExpect(t *testing.T) {
	defer func(f func() int64) { unwrittenBytes = f }(unwrittenBytes)
	for _, c := range []struct {
		n         int
		unwritten int64
		whole     bool
	}{
		{flushMin - 1, 0, false},
		{flushMin, 0, true},
		{1000, 60 << 20, true},
		{1000, 70 << 20, false},
		{flushMin, 1 << 62, false}, // /proc/meminfo unreadable
	} {
		unwrittenBytes = func() int64 { return c.unwritten }
		var b Batch
		b.Expect(c.n)
		if want := c.whole && kernelAtLeast(5, 8); b.whole != want {
			t.Errorf("Expect(%d) with %d bytes unwritten: whole = %v, want %v", c.n, c.unwritten, b.whole, want)
		}
	}
}

// A batch made durable by a flush of its file systems (Expect on a large
// batch) writes and skips as the per-file way does and leaves no temp file.
func TestBatchWholeFileSystem(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	var b Batch
	b.whole = true // what Expect decides when the machine has little unwritten data
	for i := 0; i < 100; i++ {
		name := filepath.Join(dirs[i%2], "f"+strconv.Itoa(i))
		if err := b.Add(name, []byte("new"+strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if flushable(dirs[0]) && len(b.open) != 0 {
		t.Fatalf("%d files kept open to be fsynced one by one", len(b.open))
	}
	b.Skip(filepath.Join(dirs[1], "f9"))
	if _, err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		data, err := os.ReadFile(filepath.Join(dirs[i%2], "f"+strconv.Itoa(i)))
		if i == 9 {
			if !os.IsNotExist(err) {
				t.Errorf("skipped f9 written: %q, %v", data, err)
			}
			continue
		}
		if string(data) != "new"+strconv.Itoa(i) {
			t.Fatalf("f%d = %q, %v", i, data, err)
		}
	}
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), Prefix) {
				t.Errorf("temp file left: %s", e.Name())
			}
		}
	}
}
