package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIgnoresAgreeWithGit asks git check-ignore and Ignores the same
// questions: .gitignore files at several depths, negations (also under an
// ignored directory, which git does not re-include), .git/info/exclude,
// core.excludesFile, and a tracked file that matches a pattern.
func TestIgnoresAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = ~/global-ignore\n")
	writeFile(t, filepath.Join(home, "global-ignore"), "*.secret.json\n")
	writeFile(t, filepath.Join(dir, ".git", "info", "exclude"), "scratch/\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), ".claude/\n!.claude/settings.json\nPhaseOutputs/*/tmp-*.json\n*.log\n")
	writeFile(t, filepath.Join(dir, "PhaseOutputs", ".gitignore"), "s2/\n!keep.log\n")
	writeFile(t, filepath.Join(dir, "state", ".gitignore"), "/local.json\n")
	writeFile(t, filepath.Join(dir, "tracked.log"), "x\n")
	runGit(t, dir, "add", "-f", "tracked.log")
	paths := []string{
		".claude/settings.local.json", ".claude/settings.json", "PhaseOutputs/s1/phase-01-query.json",
		"PhaseOutputs/s1/tmp-1.json", "PhaseOutputs/s2/phase-01-query.json", "PhaseOutputs/keep.log",
		"x.log", "tracked.log", "state/local.json", "state/sub/local.json", "scratch/a.json",
		"a.secret.json", "deep/b.secret.json", "MEMORY.md",
	}
	cmd := exec.Command("git", "check-ignore", "--stdin")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	out, _ := cmd.Output() // exit 1 when nothing is ignored
	want := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		want[l] = true
	}
	if len(want) < 6 {
		t.Fatalf("git check-ignore ignored only %v: the fixture is broken", want)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig := s.Ignores()
	for _, p := range paths {
		if got := ig.Ignored(p); got != want[p] {
			t.Errorf("%s: Ignored %v, git check-ignore %v", p, got, want[p])
		}
	}
}

// BenchmarkIgnored1000 is what one command pays for the ignore check of
// 1 000 kept files in 125 folders, from a fresh Ignores as each command has.
func BenchmarkIgnored1000(b *testing.B) {
	dir := realPath(b, b.TempDir())
	runGit(b, dir, "init", "-q", ".")
	writeFile(b, filepath.Join(dir, ".gitignore"), "node_modules/\n*.log\nbuild/\n")
	var paths []string
	for s := 0; s < 125; s++ {
		for n := 1; n <= 8; n++ {
			paths = append(paths, "PhaseOutputs/s"+string(rune('a'+s%26))+strings.Repeat("x", s/26)+"/phase-0"+string(rune('0'+n))+"-q.json")
		}
	}
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ig := s.Ignores()
		for _, p := range paths {
			ig.Ignored(p)
		}
	}
}
