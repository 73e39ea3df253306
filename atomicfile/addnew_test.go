package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// namedOnly makes AddNew use named temp files for the rest of the test, as
// where unnamed ones cannot be made.
func namedOnly(t *testing.T) {
	noLinks.Store(true)
	t.Cleanup(func() { noLinks.Store(false) })
}

// AddNew creates every file at Commit, in both durability ways, with the
// mode asked for, and nothing is seen in the directory before Commit on
// Linux (the temp files have no name) nor left after it anywhere.
func TestBatchAddNew(t *testing.T) {
	for _, c := range []struct {
		name         string
		whole, named bool
	}{{"fsync", false, false}, {"syncfs", true, false}, {"named", false, true}, {"named-syncfs", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.named {
				namedOnly(t)
			}
			dir := t.TempDir()
			b := Batch{whole: c.whole}
			for i := 0; i < 150; i++ { // more than one sync group
				if err := b.AddNew(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("new"+strconv.Itoa(i)), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			ents, _ := os.ReadDir(dir)
			if unnamed := runtime.GOOS == "linux" && !c.named; unnamed && len(ents) != 0 {
				t.Fatalf("%d entries before Commit, want none (unnamed temp files)", len(ents))
			} else if !unnamed && (len(ents) != 150 && !c.whole || len(ents) > 150) {
				// syncfs: the writers may still be making some
				t.Fatalf("%d entries before Commit, want 150 temp files", len(ents))
			}
			for _, e := range ents {
				if !strings.HasPrefix(e.Name(), Prefix) {
					t.Fatalf("%s before Commit", e.Name())
				}
			}
			appeared, err := b.Commit(nil)
			if err != nil || len(appeared) != 0 {
				t.Fatalf("Commit = %v, %v", appeared, err)
			}
			for i := 0; i < 150; i++ {
				name := filepath.Join(dir, "f"+strconv.Itoa(i))
				if data, _ := os.ReadFile(name); string(data) != "new"+strconv.Itoa(i) {
					t.Fatalf("f%d = %q", i, data)
				}
				if st, _ := os.Stat(name); st.Mode().Perm() != 0o640 {
					t.Fatalf("f%d mode %v", i, st.Mode().Perm())
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 150 {
				t.Fatalf("%d entries after Commit, want 150 (no temp left)", len(ents))
			}
			if b.unnamed != 0 {
				t.Fatalf("%d unnamed files still open", b.unnamed)
			}
		})
	}
}

// A file that appears where AddNew found none, before Commit, is never
// replaced, and Commit names it; the other files are written and the skipped
// ones left as they are.
func TestBatchAddNewNeverReplaces(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run("named="+strconv.FormatBool(named), func(t *testing.T) {
			if named {
				namedOnly(t)
			}
			dir := t.TempDir()
			var b Batch
			names := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c"), filepath.Join(dir, "d")}
			for _, n := range names {
				if err := b.AddNew(n, []byte("sync's"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range names[1:3] { // an agent writes two of them meanwhile
				if err := os.WriteFile(n, []byte("agent's"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			b.Skip(names[3])
			appeared, err := b.Commit(nil)
			if err != nil || !slices.Equal(appeared, names[1:3]) {
				t.Fatalf("Commit = %v, %v; want %v", appeared, err, names[1:3])
			}
			want := []string{"sync's", "agent's", "agent's", ""}
			for i, n := range names {
				data, _ := os.ReadFile(n)
				if string(data) != want[i] {
					t.Errorf("%s = %q, want %q", filepath.Base(n), data, want[i])
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 3 {
				t.Fatalf("%d entries, want 3 (no temp left)", len(ents))
			}
		})
	}
}

// Where the file system makes unnamed files but refuses to link them, their
// content is put in place through a named temp file, and later batches make
// named temp files from the start.
func TestBatchUnnamedLinkRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unnamed temp files are Linux's")
	}
	defer func(l func(*dir, *os.File, string) error) { link = l }(link)
	refused := 0
	link = func(*dir, *os.File, string) error { refused++; return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	t.Cleanup(func() { noLinks.Store(false) })
	dir := t.TempDir()
	var b Batch
	for i := 0; i < 3; i++ {
		if err := b.AddNew(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("new"+strconv.Itoa(i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f2"), []byte("agent's"), 0o644); err != nil {
		t.Fatal(err)
	}
	appeared, err := b.Commit(nil)
	if err != nil || len(appeared) != 1 || filepath.Base(appeared[0]) != "f2" {
		t.Fatalf("Commit = %v, %v; want f2 appeared", appeared, err)
	}
	if refused == 0 || !noLinks.Load() {
		t.Fatalf("link refused %d times, noLinks %v", refused, noLinks.Load())
	}
	for i, w := range []string{"new0", "new1", "agent's"} {
		name := filepath.Join(dir, "f"+strconv.Itoa(i))
		data, _ := os.ReadFile(name)
		st, _ := os.Stat(name)
		if string(data) != w || (i < 2 && st.Mode().Perm() != 0o600) {
			t.Errorf("f%d = %q, mode %v", i, data, st.Mode().Perm())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Fatalf("%d entries, want 3 (no temp left)", len(ents))
	}
	var next Batch
	if err := next.AddNew(filepath.Join(dir, "g"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if next.unnamed != 0 {
		t.Errorf("a later batch made an unnamed file after a refused link")
	}
	next.Abort()
}

// Abort closes the unnamed files and removes the named ones: nothing is
// left, nothing stays open.
func TestBatchAbortAddNew(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	for i := 0; i < 70; i++ {
		if err := b.AddNew(filepath.Join(dir, "n"+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(filepath.Join(dir, "o"+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d entries", len(ents))
	}
	if b.unnamed != 0 {
		t.Fatalf("%d unnamed files still open", b.unnamed)
	}
	if _, err := b.Commit(nil); err != nil && !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Commit after Abort: %v", err)
	}
}

// checkedRename, the way where no rename refuses to replace, does not
// rename onto a name that exists and leaves the temp file to its caller.
func TestCheckedRename(t *testing.T) {
	dir := t.TempDir()
	tmp, name := filepath.Join(dir, "tmp"), filepath.Join(dir, "name")
	if err := os.WriteFile(tmp, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte("there"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkedRename(tmp, name); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("onto an existing name: %v, want ErrExist", err)
	}
	if data, _ := os.ReadFile(name); string(data) != "there" {
		t.Fatalf("replaced: %q", data)
	}
	os.Remove(name)
	if err := checkedRename(tmp, name); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(name); string(data) != "new" {
		t.Fatalf("not renamed: %q", data)
	}
}

// Random batches of replaced and new files, some skipped, some new names
// taken meanwhile, some replaced targets found edited at Commit, in both
// durability ways and both kinds of temp file, with or without the replaced
// files kept (Keep): every target ends as the batch says, and stays so
// after a Sweep, Commit names exactly the files it did not write, and no
// temp file is left or held open.
func TestBatchRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 23))
	for round := 0; round < 40; round++ {
		named := rng.IntN(3) == 0
		if named {
			noLinks.Store(true)
		}
		dir := t.TempDir()
		b := Batch{whole: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 { // replaced files kept for a sweep, in a directory beside
			b.Keep = t.TempDir()
		}
		wantKept := 0
		want := map[string]string{}
		var wantNot []string
		edited := map[string]bool{}
		b.Unchanged = func(name string, _ fs.FileInfo) bool { return !edited[name] }
		n := 1 + rng.IntN(150)
		type step struct {
			name        string
			isNew, skip bool
			taken, edit bool
		}
		steps := make([]step, n)
		for i := range steps {
			s := step{name: filepath.Join(dir, "f"+strconv.Itoa(i)), isNew: rng.IntN(2) == 0}
			s.skip = rng.IntN(8) == 0
			s.taken = s.isNew && !s.skip && rng.IntN(6) == 0
			s.edit = !s.isNew && !s.skip && rng.IntN(6) == 0
			steps[i] = s
			if !s.isNew && !s.skip && b.Keep != "" {
				wantKept++ // an edited one too: linked before the check
			}
			if !s.isNew {
				if err := os.WriteFile(s.name, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			content := "new" + strconv.Itoa(i)
			add := b.Add
			if s.isNew {
				add = b.AddNew
			}
			if err := add(s.name, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			switch {
			case s.skip && s.isNew:
				want[s.name] = ""
			case s.skip:
				want[s.name] = "old"
			case s.taken:
				want[s.name], wantNot = "theirs", append(wantNot, s.name)
			case s.edit:
				want[s.name], wantNot = "old", append(wantNot, s.name)
			default:
				want[s.name] = content
			}
		}
		for _, s := range steps {
			switch {
			case s.skip:
				b.Skip(s.name)
			case s.taken:
				if err := os.WriteFile(s.name, []byte("theirs"), 0o644); err != nil {
					t.Fatal(err)
				}
			case s.edit:
				edited[s.name] = true
			}
		}
		notWritten, err := b.Commit(nil)
		if err != nil || !slices.Equal(notWritten, wantNot) {
			t.Fatalf("round %d: Commit = %v, %v; want %v", round, notWritten, err, wantNot)
		}
		if b.kept != wantKept {
			t.Fatalf("round %d: kept %d, want %d", round, b.kept, wantKept)
		}
		for sweep := range 2 {
			if sweep == 1 { // what a sweep takes leaves every file as it was
				if n, err := Sweep(b.Keep); err != nil || n != wantKept {
					t.Fatalf("round %d: Sweep = %d, %v; want %d", round, n, err, wantKept)
				}
			}
			for name, w := range want {
				data, err := os.ReadFile(name)
				if w == "" && !errors.Is(err, fs.ErrNotExist) || w != "" && string(data) != w {
					t.Fatalf("round %d: %s = %q, %v; want %q", round, filepath.Base(name), data, err, w)
				}
			}
		}
		if ents, _ := os.ReadDir(dir); len(ents) > n {
			t.Fatalf("round %d: %d entries for %d files: temp files left", round, len(ents), n)
		}
		if b.unnamed != 0 {
			t.Fatalf("round %d: %d unnamed files still open", round, b.unnamed)
		}
		noLinks.Store(false)
	}
}

// WriteNew creates a file where none is, and leaves one that is there as it
// is, with no temp file left either way.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a")
	if err := WriteNew(name, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(name); string(data) != "new" {
		t.Fatalf("not created: %q", data)
	}
	if err := WriteNew(name, []byte("again"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("over an existing file: %v, want ErrExist", err)
	}
	if data, _ := os.ReadFile(name); string(data) != "new" {
		t.Fatalf("replaced: %q", data)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d entries, want 1 (no temp left)", len(ents))
	}
}

// In a batch made durable by syncfs, a temp file its writers fail to make
// or fill fails Commit, naming that file; nothing is put in place and no
// temp file is left or held open.
func TestBatchWriterFails(t *testing.T) {
	defer func(w func(*dir, string, []byte, fs.FileMode, bool, bool) (*os.File, string, fs.FileInfo, error)) {
		fillTemp = w
	}(fillTemp)
	fillTemp = func(d *dir, base string, data []byte, mode fs.FileMode, unnamed, closeNamed bool) (*os.File, string, fs.FileInfo, error) {
		if base == "f7" {
			return nil, "", nil, syscall.ENOSPC
		}
		return createWrite(d, base, data, mode, unnamed, closeNamed)
	}
	for _, named := range []bool{false, true} {
		if named {
			namedOnly(t)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f3"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		b := Batch{whole: true}
		for i := 0; i < 100; i++ {
			add := b.AddNew
			if i == 3 {
				add = b.Add
			}
			if err := add(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("new"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := b.Commit(nil)
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), filepath.Join(dir, "f7")) {
			t.Fatalf("named %v: Commit = %v, want ENOSPC naming f7", named, err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "f3" || b.unnamed != 0 {
			t.Fatalf("named %v: after the failed Commit %d entries (%v), %d unnamed open; want f3 alone", named, len(ents), ents, b.unnamed)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "f3")); string(data) != "old" {
			t.Fatalf("named %v: f3 = %q", named, data)
		}
	}
}
