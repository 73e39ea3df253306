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

	"golang.org/x/sys/unix"
)

// lowDirMax bounds the directories a batch holds open to n for the rest
// of the test.
func lowDirMax(t *testing.T, n int) {
	t.Helper()
	old := dirMax
	dirMax = func() int { return n }
	t.Cleanup(func() { dirMax = old })
}

// openDirsUnder counts this process's descriptors open on a directory
// under root.
func openDirsUnder(t *testing.T, root string) int {
	return openUnder(t, root, true)
}

// openUnder counts this process's descriptors open on a directory (dirs)
// or a named file (else) under root.
func openUnder(t *testing.T, root string, dirs bool) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || target != root && !strings.HasPrefix(target, root+string(filepath.Separator)) {
			continue
		}
		if st, err := os.Stat(target); err == nil && st.IsDir() == dirs { // an unnamed file's "(deleted)" path is neither
			n++
		}
	}
	return n
}

// A batch keeps at most groupMax written temp files open before it
// fsyncs them together (a low open-file limit lowers it from syncGroup).
func TestBatchBoundsOpenTempFiles(t *testing.T) {
	old := groupMax
	groupMax = func() int { return 4 }
	t.Cleanup(func() { groupMax = old })
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	most := 0
	for i := range 30 {
		name := filepath.Join(dir, "f"+strconv.Itoa(i))
		if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(name, []byte("new"+strconv.Itoa(i)), 0o644); err != nil { // a named temp file
			t.Fatal(err)
		}
		most = max(most, openUnder(t, dir, false))
	}
	if most > 4 {
		t.Errorf("%d temp files open at once, want at most 4", most)
	}
	if notWritten, err := b.Commit(nil); err != nil || len(notWritten) != 0 {
		t.Fatalf("Commit = %v, %v", notWritten, err)
	}
	for i := range 30 {
		if data, _ := os.ReadFile(filepath.Join(dir, "f"+strconv.Itoa(i))); string(data) != "new"+strconv.Itoa(i) {
			t.Errorf("f%d = %q", i, data)
		}
	}
}

// A batch writing in more directories than dirMax holds at most dirMax of
// them open, at Add and at Commit, whatever the order of its files and
// the way it makes them, and writes every file (attack36 L6: a sync of
// 200 folders under ulimit -n 128 ran out of descriptors).
func TestBatchBoundsOpenDirs(t *testing.T) {
	const dirs, bound = 20, 4
	for _, c := range []struct {
		name                      string
		whole, named, interleaved bool
	}{
		{"fsync", false, false, false}, {"syncfs", true, false, false},
		{"named", false, true, false}, {"named-syncfs", true, true, false},
		{"interleaved", false, false, true}, {"interleaved-syncfs", true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.named {
				namedOnly(t)
			}
			lowDirMax(t, bound)
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			dir := func(i int) string { return filepath.Join(root, "d"+strconv.Itoa(i)) }
			for i := range dirs {
				if err := os.Mkdir(dir(i), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir(i), "old"), []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// a syncfs batch also holds one directory of the file system
			// it flushes (fsFlush.watch)
			want := bound
			if c.whole {
				want++
			}
			most := 0
			sample := func() { most = max(most, openDirsUnder(t, root)) }
			b := Batch{whole: c.whole}
			b.Unchanged = func(string, fs.FileInfo) bool { sample(); return true }
			add := func(i int, isNew bool) {
				var err error
				if isNew {
					err = b.AddNew(filepath.Join(dir(i), "new"), []byte("new"+strconv.Itoa(i)), 0o640)
				} else {
					err = b.Add(filepath.Join(dir(i), "old"), []byte("replaced"+strconv.Itoa(i)), 0o640)
				}
				if err != nil {
					t.Fatal(err)
				}
				sample()
			}
			if c.interleaved { // each directory taken again after all the others
				for _, isNew := range []bool{false, true} {
					for i := range dirs {
						add(i, isNew)
					}
				}
			} else {
				for i := range dirs {
					add(i, false)
					add(i, true)
				}
			}
			notWritten, err := b.Commit(func() { sample() })
			if err != nil || len(notWritten) != 0 {
				t.Fatalf("Commit = %v, %v", notWritten, err)
			}
			if most > want {
				t.Errorf("%d directories open at once, want at most %d", most, want)
			}
			if n := openDirsUnder(t, root); n != 0 {
				t.Errorf("%d directories still open after Commit", n)
			}
			for i := range dirs {
				for name, data := range map[string]string{"old": "replaced" + strconv.Itoa(i), "new": "new" + strconv.Itoa(i)} {
					if got, err := os.ReadFile(filepath.Join(dir(i), name)); err != nil || string(got) != data {
						t.Errorf("d%d/%s = %q, %v; want %q", i, name, got, err, data)
					}
				}
				if ents, _ := os.ReadDir(dir(i)); len(ents) != 2 {
					t.Errorf("d%d holds %v, want old and new alone", i, ents)
				}
			}
		})
	}
}

// A directory the batch has closed for another (past dirMax) and that is
// then swapped, before Commit, for a symbolic link into a directory DirOK
// refuses, or for another directory, or moved there behind a link (the
// very directory, where DirOK refuses it now), is not written in: its
// files are left unwritten and returned, nothing appears where the link
// leads nor in a directory put in its place, and the other directory is
// written.
func TestBatchClosedDirSwappedBeforeCommit(t *testing.T) {
	swaps := map[string]func(t *testing.T, work, git string){
		"link": swapForLink,
		"another": func(t *testing.T, work, git string) {
			g := filepath.Join(work, "g")
			if err := os.Rename(g, filepath.Join(work, "gl")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(g, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"moved-behind-link": func(t *testing.T, work, git string) {
			g := filepath.Join(work, "g")
			if err := os.Rename(g, filepath.Join(git, "g")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(git, "g"), g); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, swap := range []string{"link", "another", "moved-behind-link"} {
		for _, c := range []struct {
			name         string
			whole, named bool
		}{{"unnamed", false, false}, {"named", false, true}, {"unnamed-syncfs", true, false}, {"named-syncfs", true, true}} {
			t.Run(swap+"/"+c.name, func(t *testing.T) {
				if c.named {
					namedOnly(t)
				}
				lowDirMax(t, 1)
				b := Batch{whole: c.whole}
				b.Unchanged = func(string, fs.FileInfo) bool { return true }
				work, git := swapFixture(t, &b)
				realWork, err := filepath.EvalSymlinks(work)
				if err != nil {
					t.Fatal(err)
				}
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
				// h alone open, g closed for it (a syncfs batch also holds a
				// directory of the file system it flushes: g, its first)
				want := 1
				if c.whole {
					want++
				}
				b.waitWriters()
				if n := openDirsUnder(t, realWork); n != want || b.dirs[filepath.Join(work, "g")].isOpen() {
					t.Fatalf("%d directories of work open, want %d, g closed", n, want)
				}
				swaps[swap](t, work, git)
				notWritten, err := b.Commit(nil)
				if err != nil || !slices.Equal(notWritten, names[:2]) {
					t.Errorf("Commit = %v, %v; want g/new and g/old not written", notWritten, err)
				}
				g := filepath.Join(work, "g")
				if swap != "moved-behind-link" {
					checkUntouched(t, "through the link", git)
				} else if data, _ := os.ReadFile(filepath.Join(git, "old")); string(data) != "old" {
					t.Errorf("git/old = %q", data)
				}
				switch swap {
				case "another":
					if ents, _ := os.ReadDir(g); len(ents) != 0 {
						t.Errorf("the directory put in g's place holds %v", ents)
					}
					checkUntouchedBut(t, "moved away", filepath.Join(work, "gl"))
				case "link":
					checkUntouchedBut(t, "moved away", filepath.Join(work, "gl"))
				case "moved-behind-link": // reached again, so strata's temp files removed
					checkUntouched(t, "moved behind the link", filepath.Join(git, "g"))
				}
				if data, _ := os.ReadFile(names[2]); string(data) != "strata's2" {
					t.Errorf("h/new = %q, want written", data)
				}
			})
		}
	}
}

// checkUntouchedBut is checkUntouched, but for strata's named temp files,
// which a batch cannot reach in a directory it closed and that was moved
// away: they are left there, Leftovers once the process has ended.
func checkUntouchedBut(t *testing.T, what, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), Prefix) {
			names = append(names, e.Name())
		}
	}
	if !slices.Equal(names, []string{"old"}) {
		t.Errorf("%s: %s holds %v, want old alone (and temp files)", what, filepath.Base(dir), ents)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "old")); string(data) != "old" {
		t.Errorf("%s: %s/old = %q", what, filepath.Base(dir), data)
	}
}

// An Add in a directory the batch has closed for another, swapped since
// for a symbolic link, fails: the directory is opened again only when its
// path names the very one closed.
func TestBatchClosedDirSwappedBeforeAdd(t *testing.T) {
	lowDirMax(t, 1)
	var b Batch
	work, git := swapFixture(t, &b)
	for _, name := range []string{filepath.Join(work, "g", "a"), filepath.Join(work, "h", "a")} {
		if err := b.AddNew(name, []byte("strata's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	swapForLink(t, work, git)
	if err := b.AddNew(filepath.Join(work, "g", "b"), []byte("strata's"), 0o644); !errors.Is(err, errDirMoved) {
		t.Errorf("AddNew = %v, want the directory found moved", err)
	}
	b.Abort()
	checkUntouched(t, "through the link", git)
}

// A directory the batch has closed for another and cannot open again for
// a reason other than its path (out of descriptors) fails the Commit, its
// files not written: they are not reported as left unwritten, as for a
// folder swapped or a file edited meanwhile, which a sync would take as
// the user's.
func TestBatchClosedDirNotReopened(t *testing.T) {
	lowDirMax(t, 1)
	old := openAgain
	openAgain = func(path string) (*dir, error) {
		return nil, &os.PathError{Op: "open", Path: path, Err: unix.EMFILE}
	}
	t.Cleanup(func() { openAgain = old })
	var b Batch
	b.Unchanged = func(string, fs.FileInfo) bool { return true }
	work, _ := swapFixture(t, &b)
	names := []string{filepath.Join(work, "g", "new"), filepath.Join(work, "g", "old"), filepath.Join(work, "h", "new")}
	for i, name := range names {
		add := b.AddNew
		if i == 1 {
			add = b.Add
		}
		if err := add(name, []byte("strata's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if notWritten, err := b.Commit(nil); !errors.Is(err, unix.EMFILE) || len(notWritten) != 0 {
		t.Errorf("Commit = %v, %v; want EMFILE, nothing reported unwritten", notWritten, err)
	}
	if _, err := os.Lstat(names[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("g/new written: %v", err)
	}
	if data, _ := os.ReadFile(names[1]); string(data) != "old" {
		t.Errorf("g/old = %q", data)
	}
}
