package doctor

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/engine"
)

// TestCompanionFinding: doctor says where strata-serve is, or warns that
// strata mcp and strata timeline --serve cannot start, with the fix.
func TestCompanionFinding(t *testing.T) {
	ok := companionFinding(Options{Companion: "/usr/local/bin/strata-serve"})
	if ok.Level != LevelOK || !strings.Contains(ok.Message, "/usr/local/bin/strata-serve") {
		t.Errorf("found: %+v", ok)
	}
	missing := companionFinding(Options{CompanionErr: errors.New("strata-serve is missing: ...")})
	if missing.Level != LevelWarn || missing.Fix == "" || !strings.Contains(missing.Message, "missing") {
		t.Errorf("missing: %+v", missing)
	}
	if f := companionFinding(Options{}); f.Level != LevelWarn {
		t.Errorf("not looked for: %+v", f)
	}
}

// A .claude committed as a symbolic link out of the work tree keeps no
// file, and doctor says so, naming the link and where it leads; a link
// inside the work tree is not such a finding (attack25 hostile observation:
// doctor said only "0 kept files, all valid").
func TestLinkedFolderOutOfTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "workflow-state.json"), []byte(`{"type":"APEX","phase":"plan"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs := linkedFolders(eng)
	want := ".claude: a symbolic link out of the work tree (-> " + outside + "); strata keeps no file through it"
	if len(fs) != 1 || fs[0].Message != want || fs[0].Level != LevelWarn || fs[0].Fix == "" {
		t.Fatalf("findings %+v, want one warning %q", fs, want)
	}
	// a relative link out, and one whose name needs quoting on a terminal
	if err := os.Remove(filepath.Join(dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, outside+"/x\u202e")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	fs = linkedFolders(eng)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, `(-> "`+strings.ReplaceAll(rel, "\u202e", `\u202e`)+`")`) {
		t.Fatalf("relative link out: %+v", fs)
	}
	// a link to a folder of the work tree is not out of it
	if err := os.Remove(filepath.Join(dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	if fs := linkedFolders(eng); len(fs) != 0 {
		t.Errorf("link inside the tree: %+v", fs)
	}
}
