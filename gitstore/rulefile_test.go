package gitstore

import (
	"path/filepath"
	"strings"
	"testing"
)

// The rule files are read as git reads them: past a UTF-8 byte order mark
// (Windows editors write one), and past a line longer than a line scanner's
// buffer; each answer is checked against git's own.
func TestRuleFilesReadAsGitReadsThem(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, false)
	writeFile(t, filepath.Join(dir, ".gitattributes"), "\ufeff.claude/s.json filter=crypt\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "\ufeff.claude/a.json\n/"+strings.Repeat("x", 100_000)+"\n.claude/b.json\n")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Attributes().Filter(".claude/s.json"); got != "crypt" {
		t.Errorf("filter of .claude/s.json = %q, want crypt (git: %s)", got, runGit(t, dir, "check-attr", "filter", ".claude/s.json"))
	}
	for _, p := range []string{".claude/a.json", ".claude/b.json"} {
		if !s.Ignores().Ignored(p) {
			out, _ := gitOut(dir, nil, "check-ignore", "-v", p)
			t.Errorf("%s not ignored; git check-ignore: %q", p, out)
		}
	}
}

// A pattern that backtracks without end is cut short by its step budget,
// and the file then counts as filtered (the private side): counted in
// steps, not timed.
func TestWildmatchBudget(t *testing.T) {
	pattern := strings.Repeat("*a", 12) + "*b"
	name := strings.Repeat("a", 200) + ".json"
	budget := wildBudget
	if dowild(pattern, name, true, false, &budget); budget >= 0 {
		t.Fatalf("the pattern finished within the budget (%d steps left): pick a harder one", budget)
	}
	if !wildmatch(pattern, name, true, false) {
		t.Fatal("a pattern past its budget must count as matching")
	}
	if wildmatch("*a*b", "aaaa.json", true, false) {
		t.Fatal("an ordinary mismatch must stay one")
	}
}
