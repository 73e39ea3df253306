//go:build linux

package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func anyFile(*os.File, fs.FileInfo) bool { return true }

// Append in place loses no line of writers appending at the same time
// through descriptors of their own, opened before and after (a shell's
// `>>`): every line of each, and each of Append's, is in the file, whole.
func TestAppendKeepsConcurrentAppends(t *testing.T) {
	name := filepath.Join(t.TempDir(), "MEMORY.md")
	if err := os.WriteFile(name, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const writers, lines = 3, 200
	var wg sync.WaitGroup
	for w := range writers {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			for i := range lines {
				if _, err := fmt.Fprintf(f, "- writer %d line %03d\n", w, i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range lines {
		if ok, err := Append(name, []byte(fmt.Sprintf("- strata line %03d\n", i)), nil, anyFile); !ok || err != nil {
			t.Fatalf("Append = %v, %v", ok, err)
		}
	}
	wg.Wait()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		got[l] = true
	}
	for i := range lines {
		want := []string{fmt.Sprintf("- strata line %03d", i)}
		for w := range writers {
			want = append(want, fmt.Sprintf("- writer %d line %03d", w, i))
		}
		for _, l := range want {
			if !got[l] {
				t.Errorf("line %q lost or torn", l)
			}
		}
	}
	if n := strings.Count(string(data), "\n"); n != 1+lines*(writers+1) {
		t.Errorf("%d lines, want %d", n, 1+lines*(writers+1))
	}
}

// What Append does not write to: a symbolic link (the target untouched), a
// pipe (not blocked on), a file with another hard link, a file its caller
// does not recognise, and a file replaced by a rename between the check and
// the write (the file at the name then untouched). Each is false, no error.
func TestAppendRefuses(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, ok bool, err error, name, want string) {
		t.Helper()
		if ok || err != nil {
			t.Errorf("%s: Append = %v, %v; want false, nil", what, ok, err)
		}
		if got, _ := os.ReadFile(name); string(got) != want {
			t.Errorf("%s: %s holds %q, want %q", what, name, got, want)
		}
	}

	link := filepath.Join(dir, "link")
	write(other, "target\n")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	ok, err := Append(link, []byte("x\n"), nil, anyFile)
	check("symbolic link", ok, err, other, "target\n")

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := Append(fifo, []byte("x\n"), nil, anyFile); ok || err != nil {
		t.Errorf("pipe: Append = %v, %v; want false, nil", ok, err)
	}

	hard := filepath.Join(dir, "hard")
	write(hard, "one\n")
	if err := os.Link(hard, filepath.Join(dir, "hard2")); err != nil {
		t.Fatal(err)
	}
	ok, err = Append(hard, []byte("x\n"), nil, anyFile)
	check("hard link", ok, err, hard, "one\n")

	plain := filepath.Join(dir, "plain")
	write(plain, "one\n")
	ok, err = Append(plain, []byte("x\n"), nil, func(*os.File, fs.FileInfo) bool { return false })
	check("not recognised", ok, err, plain, "one\n")

	AppendStep = func(step, at string) {
		if step == "checked" && at == plain {
			write(other, "saved by rename\n")
			if err := os.Rename(other, plain); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { AppendStep = nil })
	ok, err = Append(plain, []byte("x\n"), nil, anyFile)
	check("replaced before the write", ok, err, plain, "saved by rename\n")
}

// A batch with Settle undoes its swap when the file it swapped out is
// written in place within that time, by a writer that opened it before
// the swap: that writer's version stays at the name, nothing of it lost.
func TestSettleUndoesTheSwapOfAFileWrittenInPlace(t *testing.T) {
	_, name, b := replaceFixture(t, false)
	b.Settle = 1 // any: the write below lands before the second look
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ReplaceStep = func(step, _ string) {
		if step == "accepted" {
			f.WriteString(" and appended")
		}
	}
	t.Cleanup(func() { ReplaceStep = nil })
	late, err := b.Commit(nil)
	if err != nil || len(late) != 1 {
		t.Fatalf("Commit = %q, %v; want %s not written", late, err, name)
	}
	if got, _ := os.ReadFile(name); string(got) != "saved and appended" {
		t.Errorf("%s holds %q, want the in-place write", name, got)
	}
	if left := Leftovers(filepath.Dir(name)); len(left) != 0 {
		t.Errorf("leftovers %v", left)
	}
}

// A write that fails part way (a full disk: the kernel has written the
// start of the new text, cut inside a UTF-8 character, then ENOSPC) is cut
// off again: the file holds exactly its old bytes, and the error says so
// (attack36 finding 1).
func TestAppendFailedWriteCutBack(t *testing.T) {
	name := filepath.Join(t.TempDir(), "MEMORY.md")
	old := []byte("# Memory\n\n- an earlier learning\n")
	if err := os.WriteFile(name, old, 0o644); err != nil {
		t.Fatal(err)
	}
	tail := []byte("- note ééééé end\n")
	defer func(w func(*os.File, []byte) (int, error)) { appendWrite = w }(appendWrite)
	appendWrite = func(f *os.File, b []byte) (int, error) {
		n, err := f.Write(b[:9]) // "- note " and half of "é"
		if err != nil {
			t.Fatal(err)
		}
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	ok, err := Append(name, tail, nil, anyFile)
	var ae *AppendError
	if ok || !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &ae) || ae.Left != 0 {
		t.Fatalf("Append = %v, %v; want false, an *AppendError wrapping ENOSPC, nothing left", ok, err)
	}
	if want := "no space left on device; nothing added, the file is as it was"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if got, _ := os.ReadFile(name); !bytes.Equal(got, old) {
		t.Fatalf("file after the failed append: %q, want its old bytes %q", got, old)
	}
}

// A line another writer appended after the failed part is never cut: the
// error says how many bytes of the new text stay.
func TestAppendFailedWriteOtherWriterAfter(t *testing.T) {
	name := filepath.Join(t.TempDir(), "MEMORY.md")
	if err := os.WriteFile(name, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(w func(*os.File, []byte) (int, error)) { appendWrite = w }(appendWrite)
	appendWrite = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:4])
		other, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		other.WriteString("- theirs\n")
		other.Close()
		return n, syscall.ENOSPC
	}
	_, err := Append(name, []byte("- mine\n"), nil, anyFile)
	var ae *AppendError
	if !errors.As(err, &ae) || ae.Left != 4 || !strings.Contains(err.Error(), "the first 4 bytes of the new text stay in the file where it ended before") {
		t.Fatalf("Append error %v; want one saying 4 bytes stay", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "# Memory\n- mi- theirs\n" {
		t.Fatalf("file %q: the other writer's line must stay", got)
	}
}
