package gitstore

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"os/user"
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

// TestIgnoresAgreeWithGitConfig asks git check-ignore, Ignores and
// CheckIgnore the same questions under each way git's configuration can
// change the answer: core.ignorecase, core.excludesFile set through
// [include] (before and after the file's own setting), [includeIf] with a
// gitdir:, gitdir/i:, onbranch: or hasconfig:remote.*.url: condition (met
// and not met), $GIT_CONFIG_GLOBAL and $GIT_CONFIG_COUNT.
func TestIgnoresAgreeWithGitConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	paths := []string{".claude/secrets.json", ".claude/Secrets.json", ".claude/token.json", ".claude/other.json",
		"Dir/a.json", "dir/b.json", "x.tok", "x.env", "x.key", ".claude/Übergabe.json", ".claude/ÜBERGABE.json"}
	cases := []struct {
		name  string
		setup func(t *testing.T, home, dir string)
	}{
		{"ignorecase", func(t *testing.T, home, dir string) {
			runGit(t, dir, "config", "core.ignorecase", "true")
			writeFile(t, filepath.Join(dir, ".gitignore"), ".claude/SECRETS.json\nDIR/\n*.TOK\n")
		}},
		{"ignorecase-unicode", func(t *testing.T, home, dir string) { // git folds ASCII only (attack20-ignore-verify N5)
			runGit(t, dir, "config", "core.ignorecase", "true")
			writeFile(t, filepath.Join(dir, ".gitignore"), ".claude/Übergabe.json\n")
		}},
		{"ignorecase-global", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\tignoreCase\n")
			writeFile(t, filepath.Join(dir, ".gitignore"), ".claude/SECRETS.json\n")
		}},
		{"include", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "inc.cfg"), "[core]\n\texcludesFile = "+filepath.Join(home, "excl")+"\n")
			runGit(t, dir, "config", "include.path", "../../home/inc.cfg") // relative to .git/config
		}},
		{"include-before-own", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "excl2"), "*.env\n")
			writeFile(t, filepath.Join(home, "inc.cfg"), "[core]\n\texcludesFile = "+filepath.Join(home, "excl")+"\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[include]\n\tpath = inc.cfg\n[core]\n\texcludesFile = \"~/excl2\" ; a comment\n")
		}},
		{"includeif-gitdir", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "excl2"), "*.key\n")
			writeFile(t, filepath.Join(home, "work.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, "other.cfg"), "[core]\n\tignorecase = true\n\texcludesFile = ~/excl2\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir:"+filepath.Dir(dir)+"/\"]\n\tpath = work.cfg\n"+
				"[includeIf \"gitdir:/no/such/place/\"]\n\tpath = other.cfg\n")
		}},
		{"includeif-gitdir-i-relative", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "*.env\n")
			writeFile(t, filepath.Join(home, "work.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir/i:"+strings.ToUpper(filepath.Base(dir))+"/\"]\n\tpath = work.cfg\n")
		}},
		{"includeif-onbranch", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "excl2"), "*.key\n")
			writeFile(t, filepath.Join(home, "main.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, "dev.cfg"), "[core]\n\texcludesFile = ~/excl2\n")
			runGit(t, dir, "config", "includeIf.onbranch:ma*.path", filepath.Join(home, "main.cfg"))
			runGit(t, dir, "config", "includeIf.onbranch:dev/.path", filepath.Join(home, "dev.cfg"))
		}},
		// hasconfig:remote.*.url: met by a remote of the repository's
		// config; a "*" that would have to span a "/" is not met
		// (WM_PATHNAME), nor a URL that only an include made by such a
		// condition names (git's first pass reads without them)
		{"includeif-hasconfig", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "excl2"), "*.key\n")
			writeFile(t, filepath.Join(home, "work.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, "other.cfg"), "[core]\n\tignorecase = true\n\texcludesFile = ~/excl2\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"hasconfig:remote.*.url:https://example.com/team/**\"]\n\tpath = work.cfg\n"+
				"[includeIf \"hasconfig:remote.*.url:https://example.com/*.git\"]\n\tpath = other.cfg\n")
			runGit(t, dir, "remote", "add", "origin", "https://example.com/team/sub/repo.git")
		}},
		{"includeif-hasconfig-global-remote", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "*.env\n")
			writeFile(t, filepath.Join(home, "excl2"), "*.key\n")
			writeFile(t, filepath.Join(home, "work.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, "other.cfg"), "[core]\n\tignorecase = true\n\texcludesFile = ~/excl2\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"hasconfig:remote.*.url:git@example.com:team/**\"]\n\tpath = work.cfg\n[includeIf \"hasconfig:remote.*.url:git@example.com:**\"]\n\tpath = other.cfg\n[remote \"up\"]\n\turl = git@example.com:team/repo.git\n")
		}},
		// HEAD as git's files backend reads it: "ref:" with no space, or
		// with white space around the branch's name
		{"includeif-onbranch-head-text", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "main.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			runGit(t, dir, "config", "includeIf.onbranch:main.path", filepath.Join(home, "main.cfg"))
			writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref:\trefs/heads/main \r\n")
		}},
		// through a symbolic link git matches the name it found the git
		// dir by as well as its real path (attack31 F1)
		{"includeif-gitdir-link", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "work.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir:"+dir+"/\"]\n\tpath = work.cfg\n")
		}},
		{"includeif-gitdir-i-link", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "*.env\n")
			writeFile(t, filepath.Join(home, "work.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[includeIf \"gitdir/i:"+strings.ToUpper(dir)+"/\"]\n\tpath = work.cfg\n")
		}},
		{"includeif-onbranch-link", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "main.cfg"), "[core]\n\texcludesFile = ~/excl\n")
			runGit(t, dir, "config", "includeIf.onbranch:main.path", filepath.Join(home, "main.cfg"))
		}},
		// "~USER/" is that user's home directory, as git expands it
		// (attack31 F7); the file is reached from there by "../"
		{"excludesfile-tilde-user", func(t *testing.T, home, dir string) {
			me, err := user.Current()
			if err != nil || me.Username == "" {
				t.Skipf("no current user in the password database: %v", err)
			}
			myHome, err := filepath.EvalSymlinks(me.HomeDir)
			if err != nil {
				t.Skipf("the current user's home directory: %v", err)
			}
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			rel, err := filepath.Rel(myHome, filepath.Join(home, "excl"))
			if err != nil {
				t.Fatal(err)
			}
			runGit(t, dir, "config", "core.excludesFile", "~"+me.Username+"/"+rel)
		}},
		{"git-config-global", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "token.json\n")
			writeFile(t, filepath.Join(home, "global.cfg"), "[core]\n\texcludesFile = "+filepath.Join(home, "excl")+"\n")
			writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\tignorecase = true\n") // not read: GIT_CONFIG_GLOBAL replaces it
			writeFile(t, filepath.Join(dir, ".gitignore"), ".claude/SECRETS.json\n")
			t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "global.cfg"))
		}},
		{"git-config-count", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "*.key\n")
			t.Setenv("GIT_CONFIG_COUNT", "1")
			t.Setenv("GIT_CONFIG_KEY_0", "core.excludesFile")
			t.Setenv("GIT_CONFIG_VALUE_0", filepath.Join(home, "excl"))
		}},
		// an include.path given there is followed, as git follows it
		// (attack40d F5)
		{"git-config-count-include", func(t *testing.T, home, dir string) {
			writeFile(t, filepath.Join(home, "excl"), "*.key\n")
			writeFile(t, filepath.Join(home, "inc.cfg"), "[core]\n\texcludesFile = "+filepath.Join(home, "excl")+"\n")
			t.Setenv("GIT_CONFIG_COUNT", "1")
			t.Setenv("GIT_CONFIG_KEY_0", "include.path")
			t.Setenv("GIT_CONFIG_VALUE_0", filepath.Join(home, "inc.cfg"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := realPath(t, t.TempDir())
			home, dir := filepath.Join(base, "home"), filepath.Join(base, "repo")
			for _, d := range []string{home, dir} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			runGit(t, dir, "init", "-q", "-b", "main", ".")
			if strings.HasSuffix(c.name, "-link") {
				// the repository as base/link/repo, link -> .
				if err := os.Symlink(".", filepath.Join(base, "link")); err != nil {
					t.Fatal(err)
				}
				dir = filepath.Join(base, "link", "repo")
			}
			c.setup(t, home, dir)
			cmd := exec.Command("git", "check-ignore", "--stdin", "-z")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PWD="+dir) // git names the git dir from $PWD
			cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
			out, _ := cmd.Output() // exit 1 when nothing is ignored
			want := map[string]bool{}
			for _, l := range strings.Split(string(out), "\x00") {
				want[l] = l != ""
			}
			if len(want) == 0 {
				t.Fatal("git check-ignore ignored nothing: the fixture is broken")
			}
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ig := s.Ignores()
			asked, err := s.CheckIgnore(context.Background(), paths)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				if got := ig.Ignored(p); got != want[p] {
					t.Errorf("%s: Ignored %v, git check-ignore %v", p, got, want[p])
				}
				if asked[p] != want[p] {
					t.Errorf("%s: CheckIgnore %v, git check-ignore %v", p, asked[p], want[p])
				}
			}
		})
	}
}

// A path is a name to CheckIgnore, never a pathspec: one that starts with
// ':' (git's pathspec magic: ":(exclude)x" made git fail the whole check,
// ":(top)secret" was judged as "secret") is asked as what it is.
func TestCheckIgnoreTakesNamesNotPathspecs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	runGit(t, dir, "init", "-q", ".")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("secret*\n:(top)ignored\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.CheckIgnore(context.Background(), []string{":(exclude)x", ":(top)secret1", ":(top)ignored", "secret2", "kept"})
	if err != nil {
		t.Fatalf("CheckIgnore: %v", err)
	}
	want := map[string]bool{":(top)ignored": true, "secret2": true}
	if !maps.Equal(got, want) {
		t.Errorf("CheckIgnore = %v, want %v", got, want)
	}
}

// A path whose folder is a symbolic link (git will not judge it) is judged
// where the file really is, when that is in the work tree: with
// ".claude -> private" and private/ ignored, .claude/secret.json is
// private, whichever name reaches it; sync published it before.
func TestCheckIgnoreJudgesALinkedFolderWhereItIs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	runGit(t, dir, "init", "-q", ".")
	for name, data := range map[string]string{".gitignore": "private/\n", "private/secret.json": "{}", "open/ok.json": "{}"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{".claude": "private", "shown": "open"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.CheckIgnore(context.Background(), []string{".claude/secret.json", "shown/ok.json", "private/secret.json"})
	if err != nil {
		t.Fatalf("CheckIgnore: %v", err)
	}
	want := map[string]bool{".claude/secret.json": true, "private/secret.json": true}
	if !maps.Equal(got, want) {
		t.Errorf("CheckIgnore = %v, want %v", got, want)
	}
}

// TestIgnorePatternsAgreeWithGit asks git check-ignore and strata, both the
// work tree's rules (Ignored) and the same rules once they are an earlier
// HEAD's (IgnoredBefore, after a commit empties them), about patterns
// go-git's gitignore package read otherwise than git (attack20-ignore F1:
// `/**.env`, `[!x]`, `[[:alpha:]]`), escapes, trailing spaces, CRLF,
// folder patterns and negations at several depths.
func TestIgnorePatternsAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	rules := map[string]string{
		".gitignore": "/**.env\nprod.en[!x]x\nprod.[[:alpha:]]nv2\n\\#hash.json\n\\!bang.json\ntrail.json   \nspace\\ .json\n" +
			"crlf.json\r\n*.log\n!keep.log\nbuild/\n/rooted.json\ndeep/**/x.json\na?c.json\n[[:digit:]]*.tmp\n**/cache\n",
		"sub/.gitignore":       "*.json\n!ok.json\n/only-here.md\nnested/\n",
		"sub/inner/.gitignore": "!again.json\n",
		// attack20-ignore-verify: a NUL ends the line for git (N1); "**"
		// after a literal start spans folders and may be empty (N2)
		"n/.gitignore": "nul.json\x00trailing\nconfig**/prod.json\n.claude**/credentials.json\n",
	}
	paths := []string{"prod.env", "x/prod.env", "prod.enxx", "prod.enyx", "prod.aenv2", "prod.env2", "#hash.json",
		"!bang.json", "trail.json", "space .json", "crlf.json", "a.log", "keep.log", "d/keep.log", "build/out.json",
		"x/build/y.json", "rooted.json", "x/rooted.json", "deep/x.json", "deep/a/b/x.json", "abc.json", "a/c.json",
		"7.tmp", "x7.tmp", "cache/a.json", "x/cache/b.json", "sub/a.json", "sub/ok.json", "sub/only-here.md",
		"sub/x/only-here.md", "sub/nested/a.md", "sub/inner/again.json", "sub/inner/b.json", "plain.md",
		"n/nul.json", "n/config/prod.json", "n/config/a/b/prod.json", "n/configprod.json", "n/config-x/prod.json",
		"n/.claude/credentials.json", "n/.claude/x/credentials.json"}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	for name, text := range rules {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), text)
	}
	for _, p := range paths {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), "x\n")
	}
	cmd := exec.Command("git", "check-ignore", "--stdin", "-z")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, _ := cmd.Output()
	want := map[string]bool{}
	for _, l := range strings.Split(string(out), "\x00") {
		want[l] = l != ""
	}
	if len(want) < 15 {
		t.Fatalf("git check-ignore ignored only %v: the fixture is broken", want)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ig := s.Ignores()
	for _, p := range paths {
		if got := ig.Ignored(p); got != want[p] {
			t.Errorf("%s: Ignored %v, git check-ignore %v", p, got, want[p])
		}
	}
	s.Close()

	// the same rules, committed, then emptied: IgnoredBefore answers for them
	for name := range rules {
		runGit(t, dir, "add", "-f", name)
	}
	runGit(t, dir, "commit", "-q", "-m", "rules")
	for name := range rules {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), "")
	}
	runGit(t, dir, "commit", "-q", "-am", "no rules")
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig = s.Ignores()
	for _, p := range paths {
		if got := ig.IgnoredBefore(p) != ""; got != want[p] {
			t.Errorf("%s: IgnoredBefore %v, git check-ignore of the earlier rules %v", p, got, want[p])
		}
	}
}

// TestIgnoresStepBudget: the wildmatch steps of one Ignores are bounded in
// all, not per match: a tracked file's long name against many costly `!`
// lines took the per-match budget on each line, seconds per command
// (attack20-ignore-verify N6). Past the budget a pattern that ignores
// counts as matching and one that re-includes as not: the safe side.
func TestIgnoresStepBudget(t *testing.T) {
	defer func(b int) { ignoreBudget = b }(ignoreBudget)
	ignoreBudget = 50_000
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.env\n"+strings.Repeat("!*a*a*a*a*a*a*a*a*b\n", 40))
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig := s.Ignores()
	long := strings.Repeat("a", 400) + ".json"
	// the `!` lines spend the budget; "*.env", asked last, then counts as
	// matching: the file is taken for ignored, the safe side
	if !ig.Ignored(long) {
		t.Errorf("%s: not ignored once the budget is spent, want the safe side (ignored)", long[:10])
	}
	if ig.steps > 0 {
		t.Fatalf("%d steps left after 40 costly lines, want the budget spent", ig.steps)
	}
	if !ig.Ignored("x.txt") {
		t.Error("x.txt: not ignored once the budget is spent, want the safe side (ignored)")
	}
}

// Committed answers as `git cat-file -e HEAD:PATH` on a file: an unborn
// HEAD holds nothing, a file only staged is not held, a folder and a
// symbolic link are not files, and case counts. The answers are read once
// per Ignores (a new one sees a new commit).
func TestIgnoresCommitted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	runGit(t, dir, "init", "-q", ".")
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config/app.yml", "a: 1\n")
	write("config/deep/x.yml", "x: 1\n")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runGit(t, dir, "add", "config/app.yml")
	if s.Ignores().Committed("config/app.yml") {
		t.Error("Committed before the first commit = true, want false")
	}
	runGit(t, dir, "commit", "-q", "-m", "one")
	if err := os.Symlink("app.yml", filepath.Join(dir, "config", "link.yml")); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "add", "config/link.yml", "config/deep/x.yml")
	runGit(t, dir, "commit", "-q", "-m", "two")
	write("config/staged.yml", "s: 1\n")
	runGit(t, dir, "add", "config/staged.yml")
	ig := s.Ignores()
	for rel, want := range map[string]bool{
		"config/app.yml":    true,
		"config/deep/x.yml": true,
		"config/App.yml":    false,
		"config/staged.yml": false,
		"config/link.yml":   false,
		"config":            false,
		"config/deep":       false,
		"config/app.yml/x":  false,
		"nothing/here.yml":  false,
	} {
		if got := ig.Committed(rel); got != want {
			t.Errorf("Committed(%q) = %v, want %v", rel, got, want)
		}
	}
	runGit(t, dir, "commit", "-q", "-m", "three")
	if !ig.Committed("config/app.yml") || ig.Committed("config/staged.yml") {
		t.Error("one Ignores read HEAD again")
	}
	if !s.Ignores().Committed("config/staged.yml") {
		t.Error("a new Ignores does not see the new commit")
	}
}
