//go:build linux

package atomicfile

import (
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
