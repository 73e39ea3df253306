package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Forget (a watcher's next batch) reads git's configuration again, not only
// the .gitignore and .gitattributes files: strata.keepPrivate unset, or
// core.excludesFile set, while a watcher runs makes an ignored file private
// at once (attack32 H2: the watcher kept recording it, and watch --sync
// pushed it).
func TestForgetReadsGitConfigAgain(t *testing.T) {
	e := newRepo(t)
	root := e.Config().Root
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	edit(t, e, ".gitignore", ".claude/token.json\n")
	edit(t, e, ".claude/token.json", "{}\n")
	edit(t, e, ".claude/notes.json", "{}\n")
	git("config", "--add", "strata.keepPrivate", ".claude/token.json")
	e.Forget()
	if _, ok := e.Config().Classify(".claude/token.json"); !ok {
		t.Fatal("strata.keepPrivate does not keep the ignored file")
	}
	git("config", "--unset-all", "strata.keepPrivate")
	e.Forget()
	if _, ok := e.Config().Classify(".claude/token.json"); ok {
		t.Error("strata.keepPrivate unset, then Forget: the ignored file is still kept")
	}

	if _, ok := e.Config().Classify(".claude/notes.json"); !ok {
		t.Fatal(".claude/notes.json is not kept")
	}
	excl := filepath.Join(t.TempDir(), "excludes")
	if err := os.WriteFile(excl, []byte("notes.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("config", "core.excludesFile", excl)
	e.Forget()
	if _, ok := e.Config().Classify(".claude/notes.json"); ok {
		t.Error("core.excludesFile set, then Forget: the file it ignores is still kept")
	}
}
