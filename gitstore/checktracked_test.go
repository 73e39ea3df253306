package gitstore

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckTracked (git ls-files) and Tracked (the index read in-process)
// agree: a tracked file, a staged one and one tracked where a linked folder
// really leads count; an untracked file, a name git would take for pathspec
// magic (":(bogus)x" made git fail the whole question) or a glob, and a file removed from the index (git rm --cached) do
// not. sync asks the first before it publishes a file only a .strata.yaml
// rule keeps (attack25 K4).
func TestCheckTrackedAgreesWithTheIndex(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	runGit(t, dir, "init", "-q", ".")
	for _, name := range []string{"config/app.yml", "config/credentials.yml", "config/staged.yml", "config/removed.yml", "config/*", ":(top)config/app.yml", ":(bogus)x", "real/t.yml"} {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), "x: 1\n")
	}
	runGit(t, dir, "add", "--", "config/app.yml", "config/removed.yml", "real/t.yml")
	runGit(t, dir, "commit", "-q", "-m", "c")
	runGit(t, dir, "add", "--", "config/staged.yml")
	runGit(t, dir, "rm", "-q", "--cached", "--", "config/removed.yml")
	if err := os.Symlink("real", filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	paths := []string{"config/app.yml", "config/credentials.yml", "config/staged.yml", "config/removed.yml", "config/*", ":(top)config/app.yml", ":(bogus)x", "linked/t.yml", "linked/none.yml"}
	got, err := s.CheckTracked(context.Background(), paths)
	if err != nil {
		t.Fatalf("CheckTracked: %v", err)
	}
	want := map[string]string{"config/app.yml": "", "config/staged.yml": "", "linked/t.yml": ""}
	if !maps.Equal(got, want) {
		t.Errorf("CheckTracked = %v, want %v", got, want)
	}
	ig := s.Ignores()
	for _, p := range paths {
		if p == "linked/t.yml" { // the engine asks Tracked where a linked folder leads (realRel)
			continue
		}
		if _, tracked := want[p]; ig.Tracked(p) != tracked {
			t.Errorf("Tracked(%q) = %v, want %v", p, ig.Tracked(p), tracked)
		}
	}
}

// A file whose index entry tells git to ignore its local changes
// (--skip-worktree, --assume-unchanged) is tracked, with that flag, as the
// in-process reader and git itself (CheckTracked) both say; sync treats its
// local version as private (attack26 F1).
func TestLocalChangesFlagsAreRead(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			runGit(t, dir, "init", "-q", ".")
			for _, name := range []string{"config/skip.yml", "config/assume.yml", "config/plain.yml", "config/long/" + strings.Repeat("n", 200) + "/" + strings.Repeat("m", 200) + ".yml"} {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), "x: 1\n")
			}
			runGit(t, dir, "add", ".")
			runGit(t, dir, "commit", "-q", "-m", "c")
			runGit(t, dir, "update-index", "--skip-worktree", "config/skip.yml")
			runGit(t, dir, "update-index", "--assume-unchanged", "config/assume.yml")
			runGit(t, dir, "update-index", "--index-version", version)
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			want := map[string]string{"config/skip.yml": SkipWorktree, "config/assume.yml": AssumeUnchanged, "config/plain.yml": ""}
			paths := []string{"config/skip.yml", "config/assume.yml", "config/plain.yml", "config/none.yml"}
			got, err := s.CheckTracked(context.Background(), paths)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("CheckTracked = %v, want %v", got, want)
			}
			ig := s.Ignores()
			for _, p := range append(paths, "config/long/"+strings.Repeat("n", 200)+"/"+strings.Repeat("m", 200)+".yml") {
				_, tracked := want[p]
				if strings.HasPrefix(p, "config/long/") {
					tracked = true
				}
				if ig.Tracked(p) != tracked || ig.Hidden(p) != want[p] {
					t.Errorf("Tracked(%q), Hidden = %v, %q; want %v, %q", p, ig.Tracked(p), ig.Hidden(p), tracked, want[p])
				}
			}
			if note, read := ig.IndexNote(); note != "" || !read {
				t.Errorf("IndexNote = %q, %v; want the index read in-process", note, read)
			}
		})
	}
}

// An index the in-process reader cannot read whole — a split index (most
// entries in a shared file), a sparse index (directory entries) — is asked
// of git, and says so: its committed files are tracked, not "untracked"
// (attack26 F2). The untracked cache and feature.manyFiles are read
// in-process.
func TestPartialIndexIsAskedOfGit(t *testing.T) {
	cases := []struct {
		name string
		prep [][]string
		note string
	}{
		{"split index", [][]string{{"config", "core.splitIndex", "true"}, {"update-index", "--split-index"}}, "split index"},
		{"sparse index", [][]string{{"sparse-checkout", "init", "--cone", "--sparse-index"}, {"sparse-checkout", "set", "config"}}, "sparse index"},
		{"untracked cache", [][]string{{"config", "core.untrackedCache", "true"}, {"update-index", "--untracked-cache"}, {"status", "--porcelain"}}, ""},
		{"many files", [][]string{{"config", "feature.manyFiles", "true"}, {"update-index", "--index-version", "4"}, {"status", "--porcelain"}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			runGit(t, dir, "init", "-q", ".")
			for _, name := range []string{"config/app.yml", "config/skip.yml", "other/x.yml"} {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), "x: 1\n")
			}
			runGit(t, dir, "add", ".")
			runGit(t, dir, "commit", "-q", "-m", "c")
			for _, args := range c.prep {
				runGit(t, dir, args...)
			}
			skip := "config/skip.yml"
			if c.name == "sparse index" {
				skip = "other/x.yml" // outside the cone: git sets the flag itself
			} else {
				runGit(t, dir, "update-index", "--skip-worktree", skip)
			}
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ig := s.Ignores()
			if !ig.Tracked("config/app.yml") || !ig.Tracked("config/skip.yml") || ig.Tracked("config/none.yml") {
				t.Errorf("Tracked app, skip, none = %v, %v, %v; want true, true, false", ig.Tracked("config/app.yml"), ig.Tracked("config/skip.yml"), ig.Tracked("config/none.yml"))
			}
			if got := ig.Hidden(skip); got != SkipWorktree {
				t.Errorf("Hidden(%s) = %q, want %q", skip, got, SkipWorktree)
			}
			if note, read := ig.IndexNote(); note != c.note || !read {
				t.Errorf("IndexNote = %q, %v; want %q, true", note, read, c.note)
			}
		})
	}
}
