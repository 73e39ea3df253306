package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// commitNew adds n new files named f0.. in dir with AddNew and commits them.
func commitNew(t *testing.T, dir string, n int) []string {
	t.Helper()
	var b Batch
	for i := 0; i < n; i++ {
		if err := b.AddNew(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("new"+strconv.Itoa(i)), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if b.unnamed != n {
		t.Fatalf("%d unnamed temp files, want %d", b.unnamed, n)
	}
	notWritten, err := b.Commit(nil)
	if err != nil {
		t.Fatal(err)
	}
	return notWritten
}

// checkNew checks that dir holds exactly f0..f(n-1) as commitNew wrote them.
func checkNew(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		name := filepath.Join(dir, "f"+strconv.Itoa(i))
		data, err := os.ReadFile(name)
		st, _ := os.Stat(name)
		if err != nil || string(data) != "new"+strconv.Itoa(i) || st.Mode().Perm() != 0o640 {
			t.Fatalf("f%d = %q, %v", i, data, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != n {
		t.Fatalf("%d entries, want %d (no temp left)", len(ents), n)
	}
}

// Where linking the open file itself is refused (ENOENT: a kernel before
// 6.10 without CAP_DAC_READ_SEARCH), every file is linked through /proc,
// and the process goes that way from then on.
func TestLinkUnnamedEmptyPathRefused(t *testing.T) {
	if !unnamedWorks() {
		t.Skip("no /proc/self/fd here")
	}
	defer func(l func(int, int, string) error) { linkEmpty = l }(linkEmpty)
	t.Cleanup(func() { viaProc.Store(false) })
	refused := 0
	linkEmpty = func(int, int, string) error { refused++; return unix.ENOENT }
	dir := t.TempDir()
	if notWritten := commitNew(t, dir, 3); len(notWritten) != 0 {
		t.Fatalf("not written: %v", notWritten)
	}
	checkNew(t, dir, 3)
	if refused != 1 || !viaProc.Load() {
		t.Fatalf("empty path tried %d times, viaProc %v; want once, then /proc only", refused, viaProc.Load())
	}
}

// Both ways of linking leave a name that appeared meanwhile as it is.
func TestLinkUnnamedNeverReplaces(t *testing.T) {
	if !unnamedWorks() {
		t.Skip("no /proc/self/fd here")
	}
	t.Cleanup(func() { viaProc.Store(false) })
	for _, proc := range []bool{false, true} {
		viaProc.Store(proc)
		d, err := openDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f, err := d.openUnnamed(0o644)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(d.path, "taken")
		if err := os.WriteFile(name, []byte("agent's"), 0o644); err != nil {
			t.Fatal(err)
		}
		err = d.linkUnnamed(f, "taken")
		f.Close()
		d.close()
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("via /proc %v: link over an existing name = %v, want ErrExist", proc, err)
		}
		if data, _ := os.ReadFile(name); string(data) != "agent's" {
			t.Fatalf("via /proc %v: taken = %q", proc, data)
		}
	}
}

// An unprivileged user's batch creates its new files whichever way this
// kernel lets it link them (run as nobody when the tests run as root).
func TestLinkUnnamedUnprivileged(t *testing.T) {
	if dir := os.Getenv("STRATA_TEST_LINK_DIR"); dir != "" {
		commitNew(t, dir, 5)
		checkNew(t, dir, 5)
		t.Logf("linked through /proc: %v", viaProc.Load())
		return
	}
	if os.Geteuid() != 0 || !unnamedWorks() {
		t.Skip("needs root to run a part as nobody, and /proc/self/fd")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "d")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(base), base, dir} { // the test's own temp folders
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe) // where nobody can run it
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(base, "atomicfile.test")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLinkUnnamedUnprivileged$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "STRATA_TEST_LINK_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) == 0 {
			t.Skipf("cannot run the test binary as nobody: %v", err)
		}
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	checkNew(t, dir, 5)
	t.Logf("as nobody: %s", bytes.TrimSpace(out))
}
