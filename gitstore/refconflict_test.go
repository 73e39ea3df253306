package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefConflictRefused: a ref in the way of the state ref's creation,
// below its name (refs/strata/state/x) or at a folder of it (refs/strata),
// packed or loose, is refused as git update-ref refuses it, with one line
// naming that ref, and no loose ref is written beside it (attack37 L1: with
// a packed refs/strata/state/x the loose refs/strata/state was written, and
// git gc failed from then on; loose, the rename's raw "file exists").
func TestRefConflictRefused(t *testing.T) {
	for _, tc := range []struct {
		name, other string
		packed      bool
	}{
		{"packed below", "refs/strata/state/x", true},
		{"loose below", "refs/strata/state/x", false},
		{"loose deeper below", "refs/strata/state/a/b", false},
		{"packed folder", "refs/strata", true},
		{"loose folder", "refs/strata", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := realPath(t, t.TempDir())
			initRepo(t, dir, true)
			runGit(t, dir, "update-ref", tc.other, "HEAD")
			if tc.packed {
				runGit(t, dir, "pack-refs", "--all")
			}
			if _, err := gitOut(dir, nil, "update-ref", "refs/strata/state", "HEAD"); err == nil {
				t.Fatal("git update-ref created refs/strata/state: not a conflict")
			}
			ce, err := recordInto(t, dir)
			if ce == nil || ce.Existing != tc.other || !strings.Contains(err.Error(), tc.other+" exists") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Record = %v, want a one-line *RefConflictError naming %s", err, tc.other)
			}
			if st, err := os.Lstat(filepath.Join(dir, ".git", "refs", "strata", "state")); err == nil && !st.IsDir() {
				t.Fatal("a loose refs/strata/state was written beside the ref in its way")
			}
			if _, err := gitOut(dir, nil, "rev-parse", "-q", "--verify", "refs/strata/state"); err == nil {
				t.Fatal("git reads a refs/strata/state")
			}
			runGit(t, dir, "gc", "-q")
		})
	}
}

// TestRefEmptyFoldersRemoved: empty folders at the state ref's loose file
// (a tool deleted refs/strata/state/x and left its folder) are removed as
// git update-ref removes them, and the ref written (attack37 L2: every
// record failed with the rename's raw "file exists"). A packed state ref
// with an empty folder at its loose place is read from packed-refs, as git
// reads it, and built on: not taken for no history.
func TestRefEmptyFoldersRemoved(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	if err := os.MkdirAll(filepath.Join(dir, ".git", "refs", "strata", "state", "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := mustRecord(t, s, change(".claude/notes.json", `{"v":1}`, t0))[0].Commit
	if got := runGit(t, dir, "rev-parse", "--verify", "refs/strata/state"); got != first {
		t.Fatalf("git reads refs/strata/state as %q, want %s", got, first)
	}

	runGit(t, dir, "pack-refs", "--all")
	if err := os.MkdirAll(filepath.Join(dir, ".git", "refs", "strata", "state", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Head(s.StateRef()); err != nil || got != first {
		t.Fatalf("Head with a packed ref and an empty folder at its loose place = %q, %v, want %s", got, err, first)
	}
	second := mustRecord(t, s, change(".claude/notes.json", `{"v":2}`, t0.Add(60e9)))[0].Commit
	if got := runGit(t, dir, "rev-parse", second+"^"); got != first {
		t.Fatalf("the second record's parent is %q, want %s", got, first)
	}
	if got := runGit(t, dir, "rev-parse", "--verify", "refs/strata/state"); got != second {
		t.Fatalf("git reads refs/strata/state as %q, want %s", got, second)
	}
}

// TestSymbolicStrataRefRefused: a strata ref that is a symbolic ref (to
// the user's branch) is refused with one line naming what it points at;
// nothing is built on the branch's history and the symbolic ref is left
// as it is (attack37 L3: the branch's commits and files became the state
// history). The rejected and a worktree's refs alike.
func TestSymbolicStrataRefRefused(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	branch := runGit(t, dir, "rev-parse", "refs/heads/main")
	for _, ref := range []string{"refs/strata/state", "refs/strata/rejected", "refs/strata/worktrees/wt/state"} {
		runGit(t, dir, "symbolic-ref", ref, "refs/heads/main")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Record(change(".claude/notes.json", `{"v":1}`, t0))
	var se *SymbolicRefError
	if !errors.As(err, &se) || se.Target != "refs/heads/main" || !strings.Contains(err.Error(), "refs/strata/state is a symbolic ref to refs/heads/main") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Record = %v, want a one-line *SymbolicRefError naming refs/heads/main", err)
	}
	for _, ref := range []string{"refs/strata/rejected", "refs/strata/worktrees/wt/state"} {
		if _, err := s.Head(ref); !errors.As(err, &se) || se.Ref != ref {
			t.Errorf("Head(%s) = %v, want a *SymbolicRefError", ref, err)
		}
	}
	if got := runGit(t, dir, "symbolic-ref", "refs/strata/state"); got != "refs/heads/main" {
		t.Fatalf("refs/strata/state is now %q", got)
	}
	if got := runGit(t, dir, "rev-parse", "refs/heads/main"); got != branch {
		t.Fatalf("the branch moved to %s", got)
	}
	// HEAD, a symbolic ref of git's, is followed as before
	if got, err := s.Head("HEAD"); err != nil || got != branch {
		t.Fatalf("Head(HEAD) = %q, %v, want %s", got, err, branch)
	}
}

// TestRefEmptyFoldersRaceWithGit: a ref git writes at one of the empty
// folders at the state ref's place after strata has found them (git
// update-ref refs/strata/state/a removes the empty folder a and puts its
// file there) is never unlinked: the record is refused with the
// *RefConflictError naming it, as is one whose folder is no longer empty,
// and git still reads the ref (attack37d L5: os.Remove unlinked the file
// git had just written, after git reported success).
func TestRefEmptyFoldersRaceWithGit(t *testing.T) {
	for _, tc := range []struct{ name, other string }{
		{"file at the folder's place", "refs/strata/state/a"},
		{"file in the folder", "refs/strata/state/b/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := realPath(t, t.TempDir())
			initRepo(t, dir, true)
			for _, d := range []string{"a", "b"} {
				if err := os.MkdirAll(filepath.Join(dir, ".git", "refs", "strata", "state", d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			head := runGit(t, dir, "rev-parse", "HEAD")
			makeRoomWalked = func() {
				if tc.other == "refs/strata/state/a" {
					// git's own way: it removes the empty folder, then writes
					runGit(t, dir, "update-ref", tc.other, head)
				} else {
					writeFile(t, filepath.Join(dir, ".git", filepath.FromSlash(tc.other)), head+"\n")
				}
			}
			defer func() { makeRoomWalked = nil }()
			ce, err := recordInto(t, dir)
			if ce == nil || ce.Existing != tc.other || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Record = %v, want a one-line *RefConflictError naming %s", err, tc.other)
			}
			if got := runGit(t, dir, "rev-parse", "--verify", tc.other); got != head {
				t.Fatalf("git reads %s as %q, want %s", tc.other, got, head)
			}
			if _, err := gitOut(dir, nil, "rev-parse", "-q", "--verify", "refs/strata/state"); err == nil {
				t.Fatal("git reads a refs/strata/state")
			}
		})
	}
}

// TestRefConflictNameShownSafely: a ref in the way whose name in
// packed-refs holds terminal escapes (ESC, an OSC title, BEL) is shown
// quoted, never raw, and the fix's git update-ref -d names it as one
// shell word that a shell reads back to the name (attack37d L7).
func TestRefConflictNameShownSafely(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	head := runGit(t, dir, "rev-parse", "HEAD")
	name := "refs/strata/state/\x1b[31mRED\x1b]0;pwned\a x"
	writeFile(t, filepath.Join(dir, ".git", "packed-refs"),
		"# pack-refs with: peeled fully-peeled sorted \n"+head+" refs/heads/main\n"+head+" "+name+"\n")
	if _, err := gitOut(dir, nil, "update-ref", "refs/strata/state", "HEAD"); err == nil {
		t.Fatal("git update-ref created refs/strata/state: not a conflict")
	}
	ce, err := recordInto(t, dir)
	if ce == nil || ce.Existing != name {
		t.Fatalf("Record = %v, want a *RefConflictError naming %q", err, name)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\a\n") {
		t.Fatalf("message holds a control character: %q", msg)
	}
	_, word, ok := strings.Cut(msg, "git update-ref -d ")
	word, _, ok2 := strings.Cut(word, ", after noting")
	if !ok || !ok2 {
		t.Fatalf("message has no git update-ref -d: %q", msg)
	}
	out, err := exec.Command("bash", "-c", "printf %s "+word).Output()
	if err != nil || string(out) != name {
		t.Fatalf("bash reads the fix's name %s as %q, %v, want %q", word, out, err, name)
	}
}

// recordInto records a version of .claude/notes.json in the repository at
// dir and returns the *RefConflictError it fails with (nil when none) and
// its error.
func recordInto(t *testing.T, dir string) (*RefConflictError, error) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Record(change(".claude/notes.json", `{"v":1}`, t0))
	var ce *RefConflictError
	if !errors.As(err, &ce) {
		ce = nil
	}
	return ce, err
}
