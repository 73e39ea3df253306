package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// TestStaged checks Staged against `git ls-files --stage` in every layout,
// after staging, a symlink, an intent-to-add entry and a temporary index.
func TestStaged(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t, kind)
			s, err := Open(r.open)
			if err != nil {
				t.Fatal(err)
			}
			testStaged(t, r, s)
		})
	}
}

func testStaged(t *testing.T, r *testRepo, s *Store) {
	snap := r.snapshot(t)
	got, err := s.Staged("")
	if err != nil {
		t.Fatal(err)
	}
	want := lsFiles(t, r.wt, "")
	if len(got) != len(want) {
		t.Fatalf("Staged: %d entries, git ls-files: %d", len(got), len(want))
	}
	for p, blob := range want {
		if got[p].Blob != blob || !got[p].Regular {
			t.Errorf("%s: got %+v, want blob %s", p, got[p], blob)
		}
	}
	r.checkInvariants(t, snap)

	// a staged change, a symlink and an intent-to-add file
	writeFile(t, filepath.Join(r.wt, ".claude", "initiative.json"), `{"staged":1}`)
	if err := os.Symlink("/etc/passwd", filepath.Join(r.wt, ".claude", "link.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(r.wt, "later.txt"), "x")
	runGit(t, r.wt, "add", ".claude")
	runGit(t, r.wt, "add", "-N", "later.txt")
	writeFile(t, filepath.Join(r.wt, ".claude", "initiative.json"), `{"worktree":2}`) // not staged
	got, err = s.Staged("")
	if err != nil {
		t.Fatal(err)
	}
	want = lsFiles(t, r.wt, "")
	if got[".claude/initiative.json"].Blob != want[".claude/initiative.json"] {
		t.Errorf("initiative.json: got %s, want the staged blob %s", got[".claude/initiative.json"].Blob, want[".claude/initiative.json"])
	}
	data, size, err := s.ReadBlob(got[".claude/initiative.json"].Blob, 1<<20)
	if err != nil || string(data) != `{"staged":1}` || size != int64(len(data)) {
		t.Errorf("ReadBlob: %q %d %v", data, size, err)
	}
	if data, size, err := s.ReadBlob(got[".claude/initiative.json"].Blob, 3); err != nil || data != nil || size != 12 {
		t.Errorf("ReadBlob past the limit: %q %d %v", data, size, err)
	}
	if l, ok := got[".claude/link.json"]; !ok || l.Regular {
		t.Errorf("symlink: got %+v, %v", l, ok)
	}
	if _, ok := got["later.txt"]; ok {
		t.Errorf("intent-to-add entry listed")
	}

	// a temporary index, as `git commit -a` hands to its hooks
	tmp := filepath.Join(t.TempDir(), "index")
	if _, err := gitOutEnv(r.wt, "GIT_INDEX_FILE="+tmp, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	got, err = s.Staged(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got[".claude/initiative.json"].Blob != lsFiles(t, r.wt, tmp)[".claude/initiative.json"] {
		t.Errorf("temporary index not read")
	}
}

func TestStagedNoIndex(t *testing.T) {
	r := newTestRepo(t, "empty")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Staged("")
	if err != nil || len(got) != 0 {
		t.Fatalf("Staged before the first add: %v, %v", got, err)
	}
	if _, _, err := s.ReadBlob(strings.Repeat("ab", 20), 10); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("ReadBlob of a missing blob: %v", err)
	}
}

// TestFilesWhere checks the pruned walk against Files.
func TestFilesWhere(t *testing.T) {
	r := newTestRepo(t, "plain")
	writeFile(t, filepath.Join(r.wt, "a", "b", "c.txt"), "c")
	writeFile(t, filepath.Join(r.wt, "z", "d.txt"), "d")
	runGit(t, r.wt, "add", "-A")
	runGit(t, r.wt, "commit", "-q", "-m", "more")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Files("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	some, err := s.FilesWhere("HEAD", func(dir string) bool {
		seen = append(seen, dir)
		return dir == "" || dir == "a" || dir == ".claude"
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := some["a/b/c.txt"]; ok {
		t.Errorf("a/b was entered")
	}
	for _, p := range []string{"README.md", ".claude/workflow-state.json"} {
		if some[p] != all[p] || some[p] == "" {
			t.Errorf("%s: %q, want %q", p, some[p], all[p])
		}
	}
	if strings.Join(seen, ",") != ",.claude,a,a/b,z" {
		t.Errorf("descend asked about %q", seen)
	}
	if _, err := s.FilesWhere(strings.Repeat("cd", 20), func(string) bool { return true }); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("missing commit: %v", err)
	}
}

// lsFiles is `git ls-files --stage` as path -> blob.
func lsFiles(t *testing.T, dir, indexFile string) map[string]string {
	t.Helper()
	env := ""
	if indexFile != "" {
		env = "GIT_INDEX_FILE=" + indexFile
	}
	out, err := gitOutEnv(dir, env, "ls-files", "--stage")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		m[path] = f[1]
	}
	return m
}

func gitOutEnv(dir, env string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(os.TempDir())
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	out, err := cmd.Output()
	return strings.TrimRight(string(out), "\n"), err
}

// TestMergeHeads checks MergeHeads before a merge and during an octopus
// merge left uncommitted, in the main work tree and a linked one (whose
// MERGE_HEAD is in its own git directory).
func TestMergeHeads(t *testing.T) {
	for _, kind := range []string{"plain", "worktree"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t, kind)
			s, err := Open(r.open)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := s.MergeHeads(); err != nil || got != nil {
				t.Fatalf("no merge: %v %v", got, err)
			}
			var want []string
			for _, b := range []string{"b1", "b2"} {
				runGit(t, r.wt, "checkout", "-q", "-b", b, "HEAD")
				writeFile(t, filepath.Join(r.wt, b+".txt"), b)
				runGit(t, r.wt, "add", b+".txt")
				runGit(t, r.wt, "commit", "-q", "--no-verify", "-m", b)
				want = append(want, strings.TrimSpace(runGit(t, r.wt, "rev-parse", "HEAD")))
				runGit(t, r.wt, "checkout", "-q", "-")
			}
			runGit(t, r.wt, "merge", "-q", "--no-commit", "--no-ff", "b1", "b2")
			got, err := s.MergeHeads()
			if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("octopus merge: %v %v, want %v", got, err, want)
			}
		})
	}
}
