package engine

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// A directory of a kept path that resolves into a .git directory (this
// repository's own through a committed symlink `g -> .git`, a directory of
// it, or a nested repository's) is refused as one that leaves the work
// tree is: nothing there is read, recorded, restored, checked out or handed
// to a writer of its own (WriteOwn). Each of these wrote into .git before.
func TestNothingThroughALinkIntoGit(t *testing.T) {
	for _, tc := range []struct{ name, target string }{
		{"own git dir", ".git"},
		{"its hooks", ".git/hooks"},
		{"a nested repository's", "sub/.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"g/*\", schema: markdown}\n", "g/probe", "g/new")
			now := t0
			e.Now = func() time.Time { now = now.Add(time.Minute); return now }
			root := e.Config().Root
			if strings.HasPrefix(tc.target, "sub/") {
				if out, err := exec.Command("git", "init", "-q", filepath.Join(root, "sub")).CombinedOutput(); err != nil {
					t.Fatalf("git init: %v: %s", err, out)
				}
			}
			// g/probe is recorded while g is a directory of the work tree
			// (as a remote's tree or an older clone has it) ...
			edit(t, e, "g/probe", "recorded\n")
			k := kept(t, e, "g/probe")
			record(t, e, k.Path)
			head := mustHead(t, e)
			// ... then g becomes a link to a directory of git's own.
			if err := os.RemoveAll(filepath.Join(root, "g")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target, filepath.Join(root, "g")); err != nil {
				t.Fatal(err)
			}
			probe := filepath.Join(root, tc.target, "probe")
			if err := os.WriteFile(probe, []byte("git's own\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.Forget()
			refused := func(what string, err error) {
				t.Helper()
				var pe *PathError
				if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "into a .git directory") {
					t.Errorf("%s: %v, want a refusal naming the link into .git", what, err)
				}
			}

			if _, p := e.Read(k); p == nil || !strings.Contains(p.Message, "into a .git directory") {
				t.Errorf("Read: %v, want refused", p)
			}
			outs, err := e.Record([]config.Kept{k}, state.SourceRecord)
			if err != nil || len(outs) != 1 || outs[0].Entry != nil || len(outs[0].Problems) == 0 {
				t.Errorf("Record: %+v, %v; want nothing recorded, a problem", outs, err)
			}
			if h := mustHead(t, e); h != head {
				t.Errorf("the state ref moved: %s", h)
			}
			_, err = e.Restore([]config.Kept{k}, Point{Rev: head})
			refused("Restore", err)
			_, err = e.Put(k, "", []byte("put\n"), state.SourceRecord)
			refused("Put", err)
			ran := false
			_, err = e.WriteOwn(k, func(string) (bool, error) { ran = true; return true, nil })
			refused("WriteOwn", err)
			if ran {
				t.Error("WriteOwn ran its writer")
			}
			w := e.Checkouts()
			defer w.Abort()
			_, err = w.Add(k, gitstore.BlobHash([]byte("git's own\n")), gitstore.BlobHash([]byte("sync\n")), []byte("sync\n"))
			var prob *state.Problem
			if !errors.As(err, &prob) || !strings.Contains(prob.Message, "into a .git directory") {
				t.Errorf("Checkouts.Add: %v, want refused", err)
			}
			fresh := kept(t, e, "g/new")
			if _, err := w.Add(fresh, "", gitstore.BlobHash([]byte("new\n")), []byte("new\n")); !errors.As(err, &prob) {
				t.Errorf("Checkouts.Add of a new file: %v, want refused", err)
			}
			if _, err := w.Commit(nil); err != nil {
				t.Fatal(err)
			}

			if data, _ := os.ReadFile(probe); string(data) != "git's own\n" {
				t.Errorf("%s changed: %q", probe, data)
			}
			if _, err := os.Lstat(filepath.Join(root, tc.target, "new")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a file was created in %s: %v", tc.target, err)
			}
		})
	}
}

// A kept file's directory that is a symbolic link to nothing is refused,
// not taken for a directory whose files were deleted: recording it recorded
// their deletion, and restore then failed creating the directory.
func TestDanglingLinkDirIsNotADeletion(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, `{"v": 1}`)
	record(t, e, k.Path)
	head := mustHead(t, e)
	dir := filepath.Join(e.Config().Root, ".claude")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone", "away"), dir); err != nil {
		t.Fatal(err)
	}
	e.Forget()
	if _, p := e.Read(k); p == nil || !strings.Contains(p.Message, "leads nowhere") {
		t.Errorf("Read: %v, want refused", p)
	}
	outs, err := e.Record([]config.Kept{k}, state.SourceRecord)
	if err != nil || len(outs) != 1 || outs[0].Entry != nil {
		t.Errorf("Record: %+v, %v; want nothing recorded", outs, err)
	}
	if h := mustHead(t, e); h != head {
		t.Errorf("a deletion was recorded: %s", h)
	}
	if _, err := e.Restore([]config.Kept{k}, Point{Rev: head}); err == nil || !strings.Contains(err.Error(), "leads nowhere") {
		t.Errorf("Restore: %v, want refused", err)
	}
}

// A kept file's directory swapped for a symbolic link into .git while a
// batch of checkouts is under way (between Add and Commit, or between the
// check Add makes and its write, here stood for by the check remembered
// from before the swap) is never written through: no file appears in .git
// nor in the directory moved away; a file added before the swap is
// returned late, one added after it refused as a directory into .git is.
func TestCheckoutsDirSwappedForLinkIntoGit(t *testing.T) {
	for _, when := range []string{"before Commit", "within Add"} {
		t.Run(when, func(t *testing.T) {
			e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"g/*\", schema: markdown}\n", "g/pwned")
			root := e.Config().Root
			if err := os.Mkdir(filepath.Join(root, "g"), 0o755); err != nil {
				t.Fatal(err)
			}
			k := kept(t, e, "g/pwned")
			swap := func() {
				g := filepath.Join(root, "g")
				if err := os.Rename(g, filepath.Join(root, "gl")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(".git", g); err != nil {
					t.Fatal(err)
				}
			}
			data := []byte("written by strata\n")
			c := e.Checkouts()
			defer c.Abort()
			if when == "within Add" {
				if err := e.inside(k); err != nil { // checked, and remembered
					t.Fatal(err)
				}
				swap()
				_, err := c.Add(k, "", gitstore.BlobHash(data), data)
				var prob *state.Problem
				if !errors.As(err, &prob) || !strings.Contains(prob.Message, "into a .git directory") {
					t.Errorf("Add = %v, want refused as a link into .git", err)
				}
			} else {
				if ok, err := c.Add(k, "", gitstore.BlobHash(data), data); !ok || err != nil {
					t.Fatalf("Add = %v, %v", ok, err)
				}
				swap()
			}
			late, err := c.Commit(nil)
			if want := map[bool]int{true: 1, false: 0}[when == "before Commit"]; err != nil || len(late) != want {
				t.Errorf("Commit = %v, %v; want %d late", late, err, want)
			}
			for _, dir := range []string{".git", "gl"} {
				if _, err := os.Lstat(filepath.Join(root, dir, "pwned")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a file was created in %s: %v", dir, err)
				}
				ents, _ := os.ReadDir(filepath.Join(root, dir))
				for _, d := range ents {
					if strings.HasPrefix(d.Name(), ".strata-tmp-") {
						t.Errorf("left behind %s/%s", dir, d.Name())
					}
				}
			}
		})
	}
}

// A single write (Put; the layers' writes and journal recovery write the
// same way) is judged where its directory really is when it writes, not
// only when inside() looked: with the directory's resolution cached from
// before g was swapped for a link into .git, it still writes nothing there.
func TestPutThroughASwappedDirWritesNothing(t *testing.T) {
	e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"g/*\", schema: markdown}\n", "g/probe")
	root := e.Config().Root
	edit(t, e, "g/probe", "recorded\n")
	k := kept(t, e, "g/probe")
	if _, p := e.Read(k); p != nil { // inside() caches g's resolution
		t.Fatal(p)
	}
	if err := os.Rename(filepath.Join(root, "g"), filepath.Join(root, "g.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(root, "g")); err != nil {
		t.Fatal(err)
	}
	_, err := e.Put(k, "", []byte("put\n"), state.SourceRecord)
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "into a .git directory") {
		t.Errorf("Put: %v, want refused as a link into .git", err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git", "probe")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Put wrote into .git: %v", err)
	}
}

// The directories a write makes for a new file are made through a handle
// judged where it really is: with g's resolution cached from before g was
// swapped for a link into .git, a write of g/sub/new makes no .git/sub.
func TestNoDirectoryMadeThroughASwappedDir(t *testing.T) {
	e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"g/*\", schema: markdown}\n  - {glob: \"g/*/*\", schema: markdown}\n", "g/probe", "g/sub/new")
	root := e.Config().Root
	edit(t, e, "g/probe", "recorded\n")
	if _, p := e.Read(kept(t, e, "g/probe")); p != nil { // inside() caches g's resolution
		t.Fatal(p)
	}
	if err := os.Rename(filepath.Join(root, "g"), filepath.Join(root, "g.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(root, "g")); err != nil {
		t.Fatal(err)
	}
	k := kept(t, e, "g/sub/new")
	_, err := e.Put(k, "", []byte("new\n"), state.SourceRecord)
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "into a .git directory") {
		t.Errorf("Put: %v, want refused as a link into .git", err)
	}
	w := e.Checkouts()
	defer w.Abort()
	if _, err := w.Add(k, "", gitstore.BlobHash([]byte("new\n")), []byte("new\n")); err == nil {
		t.Error("Checkouts.Add: no error, want refused")
	}
	if _, err := os.Lstat(filepath.Join(root, ".git", "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory was made in .git: %v", err)
	}
}
