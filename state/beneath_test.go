//go:build linux || darwin || freebsd || netbsd || openbsd

package state

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// treeFixture is a work tree root with d/f, other/f, a named pipe, and an
// outside folder with a secret, plus links into and out of the tree.
func treeFixture(t *testing.T) (Tree, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	for name, content := range map[string]string{
		"root/d/f":     "in d",
		"root/other/f": "in other",
		"root/big":     strings.Repeat("x", 100),
		"out/f":        "SECRET",
	} {
		name = filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"rel":     "other",                      // a folder of the tree, relative
		"abs":     filepath.Join(root, "other"), // a folder of the tree, absolute
		"up":      "d/../other",                 // through a ".." that stays inside
		"chain":   "rel",                        // a link to a link
		"outrel":  "../out",                     // out, relative
		"outabs":  out,                          // out, absolute
		"d/flink": "f",                          // a link at the file itself
		"d/esc":   "../../out",                  // out from below
		"loop":    "loop",                       // never resolves
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Tree{Root: root, Real: root}, out
}

// eachResolution runs f with openat2 (where there is one) and with the
// walk alone, as on a kernel without openat2.
func eachResolution(t *testing.T, f func(t *testing.T)) {
	t.Run("fast", f)
	t.Run("walk", func(t *testing.T) {
		was := noOpenat2Set(true)
		defer noOpenat2Set(was)
		f(t)
	})
}

func TestTreeReadFile(t *testing.T) {
	eachResolution(t, func(t *testing.T) {
		tr, _ := treeFixture(t)
		for _, c := range []struct{ rel, want string }{
			{"d/f", "in d"},
			{"rel/f", "in other"},
			{"abs/f", "in other"},
			{"up/f", "in other"},
			{"chain/f", "in other"},
		} {
			got, err := tr.ReadFile(c.rel, 0)
			if err != nil || string(got) != c.want {
				t.Errorf("%s: %q, %v; want %q", c.rel, got, err, c.want)
			}
		}
		for _, c := range []struct {
			rel  string
			want error
			msg  string
		}{
			{"outrel/f", ErrOutside, ""},
			{"outabs/f", ErrOutside, ""},
			{"d/esc/f", ErrOutside, ""},
			{"d/flink", ErrNotRegular, "symbolic link"},
			{"fifo", ErrNotRegular, "named pipe"},
			{"d", ErrNotRegular, "directory"},
			{"missing/f", fs.ErrNotExist, ""},
			{"d/missing", fs.ErrNotExist, ""},
			{"big", ErrTooLarge, ""},
			{"d/f/g", syscall.ENOTDIR, ""},
			{"loop/f", syscall.ELOOP, ""},
		} {
			got, err := tr.ReadFile(c.rel, 10)
			if !errors.Is(err, c.want) || !strings.Contains(errString(err), c.msg) || got != nil {
				t.Errorf("%s: %q, %v; want %v %q", c.rel, got, err, c.want, c.msg)
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Judge is given the real directory the file was found in.
func TestTreeReadFileJudgesTheRealDirectory(t *testing.T) {
	eachResolution(t, func(t *testing.T) {
		tr, _ := treeFixture(t)
		var seen []string
		refuse := errors.New("refused")
		tr.Judge = func(dir string) error {
			seen = append(seen, dir)
			if filepath.Base(dir) == "other" {
				return refuse
			}
			return nil
		}
		if _, err := tr.ReadFile("d/f", 0); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.ReadFile("abs/f", 0); !errors.Is(err, refuse) {
			t.Fatalf("abs/f: %v, want the judge's refusal", err)
		}
		want := []string{filepath.Join(tr.Real, "d"), filepath.Join(tr.Real, "other")}
		if strings.Join(seen, ",") != strings.Join(want, ",") {
			t.Errorf("judged %q, want %q", seen, want)
		}
	})
}

// A folder swapped for a link out of the tree after the caller's checks
// and before the read (attack25 K1) is refused, its file never read.
func TestTreeReadFileFolderSwappedOut(t *testing.T) {
	eachResolution(t, func(t *testing.T) {
		tr, out := treeFixture(t)
		beforeTreeOpen = func(string) {
			d := filepath.Join(tr.Root, "d")
			if err := os.Rename(d, d+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, d); err != nil {
				t.Fatal(err)
			}
		}
		defer func() { beforeTreeOpen = nil }()
		got, err := tr.ReadFile("d/f", 0)
		if !errors.Is(err, ErrOutside) || got != nil {
			t.Fatalf("read %q, %v; want ErrOutside", got, err)
		}
	})
}

// ReadFileMode gives the permission bits of the file it read.
func TestTreeReadFileMode(t *testing.T) {
	eachResolution(t, func(t *testing.T) {
		tr, _ := treeFixture(t)
		if err := os.Chmod(filepath.Join(tr.Root, "other", "f"), 0o640); err != nil {
			t.Fatal(err)
		}
		got, mode, err := tr.ReadFileMode("rel/f", 0)
		if err != nil || string(got) != "in other" || mode != 0o640 {
			t.Fatalf("%q, %v, %v; want the file's content and mode 0640", got, mode, err)
		}
	})
}

// A Tree with Dir reads beneath the folder held open, even once the root
// was renamed and another put at its name (one command's or one batch's
// view); with Dir closed by its holder, it opens the root at its name again.
func TestTreeReadFileBeneathAHeldDir(t *testing.T) {
	eachResolution(t, func(t *testing.T) {
		tr, _ := treeFixture(t)
		dir, err := OpenDir(tr.Root)
		if err != nil {
			t.Fatal(err)
		}
		tr.Dir = dir
		if got, err := tr.ReadFile("d/f", 0); err != nil || string(got) != "in d" {
			t.Fatalf("%q, %v", got, err)
		}
		if err := os.Rename(tr.Root, tr.Root+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(tr.Root, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tr.Root, "d", "f"), []byte("the new tree"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := tr.ReadFile("d/f", 0); err != nil || string(got) != "in d" {
			t.Fatalf("held: %q, %v; want the held folder's file", got, err)
		}
		dir.Close()
		if got, err := tr.ReadFile("d/f", 0); err != nil || string(got) != "the new tree" {
			t.Fatalf("released: %q, %v; want the file at the root's name now", got, err)
		}
	})
}
