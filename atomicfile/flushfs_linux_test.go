package atomicfile

import (
	"os"
	"testing"
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

// A write-back error is what syncfs reports; on a healthy disk flush of two
// watched directories (one file system) succeeds and closes what it opened.
func TestFSFlush(t *testing.T) {
	var f fsFlush
	for _, d := range []string{t.TempDir(), t.TempDir()} {
		if err := f.watch(d); err != nil {
			t.Fatal(err)
		}
		if err := f.watch(d); err != nil { // seen: nothing more opened
			t.Fatal(err)
		}
	}
	if len(f.fds) < 1 || len(f.fds) > 2 {
		t.Fatalf("%d directories open for two temp dirs", len(f.fds))
	}
	if err := f.flush(); err != nil {
		t.Fatal(err)
	}
	if len(f.fds) != 0 {
		t.Errorf("%d left open", len(f.fds))
	}
	if err := f.watch("/no/such/dir"); err == nil {
		t.Error("watch of a missing directory succeeded")
	}
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
