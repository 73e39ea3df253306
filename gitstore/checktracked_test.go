package gitstore

import (
	"context"
	"maps"
	"os"
	"path/filepath"
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
	want := map[string]bool{"config/app.yml": true, "config/staged.yml": true, "linked/t.yml": true}
	if !maps.Equal(got, want) {
		t.Errorf("CheckTracked = %v, want %v", got, want)
	}
	ig := s.Ignores()
	for _, p := range paths {
		if p == "linked/t.yml" { // the engine asks Tracked where a linked folder leads (realRel)
			continue
		}
		if ig.Tracked(p) != want[p] {
			t.Errorf("Tracked(%q) = %v, want %v", p, ig.Tracked(p), want[p])
		}
	}
}
