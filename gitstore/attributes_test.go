package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// attrFixture writes a repository whose attribute files exercise what
// decides a path's filter: precedence by depth and by line, unsetting and
// un-specifying, patterns with and without a slash, "**", folder patterns,
// negative patterns, quoting, macros, invalid lines, info/attributes and
// core.attributesFile. It returns the work tree and, by path, the filter
// driver git gives each path ("" for none).
func attrFixture(t *testing.T) (string, map[string]string) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_ATTR_NOSYSTEM", "1")
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\tattributesFile = ~/global-attrs\n")
	writeFile(t, filepath.Join(home, "global-attrs"), "*.enc filter=global\n[attr]secret filter=crypt diff=crypt\n")
	writeFile(t, filepath.Join(dir, ".gitattributes"), `# comment
.claude/settings.json filter=crypt diff=crypt
.claude/*.key.json secret
*.lfs.json filter=lfs diff=lfs merge=lfs -text
PhaseOutputs/**/raw-*.json filter=crypt
notes/ filter=crypt
!neg.json filter=crypt
"quoted name.json" filter=crypt
a.enc -filter
x.json filter=root
y.json filter=root
later.json filter=first
later.json filter=second
reset.json filter=a
reset.json !filter
reunset.json -filter
reunset.json filter=b
inv.json filter=x b@d
/anchored.json filter=crypt
lit**/creds.json filter=starstar
nul.json filter=nul`+"\x00"+` -filter
`)
	writeFile(t, filepath.Join(dir, ".claude", ".gitattributes"), `plain.key.json -filter
local/*.json filter=deep
[attr]bad filter=bad
m.json bad
`)
	writeFile(t, filepath.Join(dir, ".claude", "sub", ".gitattributes"), "x.json filter=sub\ny.json filter=sub\n")
	writeFile(t, filepath.Join(dir, ".git", "info", "attributes"), "info.json filter=info\n.claude/sub/y.json filter=info\n")
	return dir, map[string]string{
		".claude/settings.json":      "crypt",
		".claude/a.key.json":         "crypt", // the macro secret
		".claude/plain.key.json":     "",      // a deeper -filter beats the macro
		"big.lfs.json":               "lfs",
		"deep/dir/big.lfs.json":      "lfs", // no slash: the base name at any depth
		"PhaseOutputs/s1/raw-1.json": "crypt",
		"PhaseOutputs/raw-2.json":    "crypt", // "/**/" may be no folder
		"PhaseOutputs/s1/phase.json": "",
		"notes/a.json":               "", // a folder's pattern does not reach inside it
		"neg.json":                   "", // a negative pattern is dropped
		"quoted name.json":           "crypt",
		"a.enc":                      "", // the root's -filter beats the global file
		"b.enc":                      "global",
		"x.json":                     "root",
		".claude/sub/x.json":         "sub",  // the deeper file wins
		".claude/sub/y.json":         "info", // info/attributes beats every .gitattributes
		"info.json":                  "info",
		".claude/local/a.json":       "deep", // a slash: relative to its file's folder
		"local/a.json":               "",
		".claude/sub/local/a.json":   "",
		"later.json":                 "second", // a later line wins
		"reset.json":                 "",       // !filter: unspecified again
		"reunset.json":               "b",
		".claude/m.json":             "", // macros are defined only at the top
		"inv.json":                   "", // a line with an invalid name is dropped
		"anchored.json":              "crypt",
		"sub/anchored.json":          "",
		"MEMORY.md":                  "",
		// git's match_pathname compares the literal start by itself, then
		// "**/creds.json" spans folders and may be empty (attack20-final A1)
		"lit/creds.json":     "starstar",
		"lit/a/b/creds.json": "starstar",
		"litcreds.json":      "starstar",
		"nul.json":           "nul", // git reads a line up to its NUL (A2)
	}
}

// TestAttributesAgreeWithGit asks Attributes, git check-attr (through
// CheckFilter) and the fixture's expectations the same questions.
func TestAttributesAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir, want := attrFixture(t)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	git, err := s.CheckFilter(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Attributes()
	for _, p := range paths {
		if git[p] != want[p] {
			t.Errorf("git check-attr %s: filter %q, the fixture says %q", p, git[p], want[p])
		}
		if got := a.Filter(p); got != want[p] {
			t.Errorf("Filter(%s) = %q, want %q", p, got, want[p])
		}
	}
}

// TestAttributesIgnoreCase: under core.ignorecase a pattern names a path in
// another case, as git matches it.
func TestAttributesIgnoreCase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir, _ := attrFixture(t)
	runGit(t, dir, "config", "core.ignorecase", "true")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	paths := []string{".Claude/Settings.JSON", "BIG.LFS.JSON", ".claude/local/A.json"}
	git, err := s.CheckFilter(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Attributes()
	for _, p := range paths {
		if got := a.Filter(p); got == "" || got != git[p] {
			t.Errorf("Filter(%s) = %q, git says %q", p, got, git[p])
		}
	}
}

// TestAttributesSymlinkedFile: git does not read a .gitattributes that is a
// symbolic link in the work tree, and neither does Attributes.
func TestAttributesSymlinkedFile(t *testing.T) {
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(dir, "elsewhere"), "*.json filter=crypt\n")
	if err := os.Symlink("elsewhere", filepath.Join(dir, ".gitattributes")); err != nil {
		t.Skip(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Attributes().Filter("a.json"); got != "" {
		t.Errorf("Filter(a.json) = %q through a symlinked .gitattributes", got)
	}
}

// TestWildmatch checks the pattern language against cases from git's own
// wildmatch tests (t3070), with WM_PATHNAME.
func TestWildmatch(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		fold, want    bool
	}{
		{"foo", "foo", false, true},
		{"foo", "bar", false, false},
		{"???", "foo", false, true},
		{"*", "foo/bar", false, false},
		{"*/bar", "foo/bar", false, true},
		{"**/foo", "foo", false, true},
		{"**/foo", "a/b/foo", false, true},
		{"foo/**", "foo/a/b", false, true},
		{"foo/**/bar", "foo/bar", false, true},
		{"foo/**/bar", "foo/a/b/bar", false, true},
		{"foo/**/b/c", "foo/b/x/b/c", false, true},
		{"foo**bar", "foo/bar", false, false}, // "**" not alone is "*"
		{"foo?bar", "foo/bar", false, false},
		{"foo[/]bar", "foo/bar", false, false},
		{"[ab]*.json", "b1.json", false, true},
		{"[!ab]*.json", "b1.json", false, false},
		{"[^ab]*.json", "c1.json", false, true},
		{"[a-c]", "b", false, true},
		{"[[:digit:]]x", "7x", false, true},
		{"[[:upper:]]x", "ax", true, true},
		{`\*`, "*", false, true},
		{`\*`, "a", false, false},
		{"*.JSON", "a.json", true, true},
		{"*.JSON", "a.json", false, false},
		{"[", "[", false, false}, // an unclosed class matches nothing, as in git
	} {
		if got := wildmatch(c.pattern, c.text, true, c.fold); got != c.want {
			t.Errorf("wildmatch(%q, %q, fold %v) = %v, want %v", c.pattern, c.text, c.fold, got, c.want)
		}
	}
}

// BenchmarkAttributesFirstQuestion is what a hook call pays for one kept
// file's filter: a fresh Attributes (git's configuration, the global files,
// info/attributes, a root .gitattributes of 200 lines, the file's folder's)
// answering one question.
//
//	go test -run XXX -bench AttributesFirst ./gitstore/
func BenchmarkAttributesFirstQuestion(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := realPath(b, b.TempDir())
	runGit(b, dir, "init", "-q", ".")
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("*.x%d filter=lfs diff=lfs merge=lfs -text", i))
	}
	writeFile(b, filepath.Join(dir, ".gitattributes"), strings.Join(lines, "\n")+"\n")
	writeFile(b, filepath.Join(dir, ".claude", ".gitattributes"), "settings.json filter=crypt\n")
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for b.Loop() {
		if s.Attributes().Filter(".claude/settings.json") != "crypt" {
			b.Fatal("no filter")
		}
	}
}
