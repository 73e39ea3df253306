package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// TestOpenWorkTreeAsGit: the work tree Open takes for a git dir that names
// one elsewhere (core.worktree, $GIT_WORK_TREE) is the one git takes, with
// `git rev-parse --show-toplevel` as the judge, in each layout; where git
// finds no work tree, Open refuses (attack27 F1: the folder holding .git
// was taken, and every kept file looked deleted).
func TestOpenWorkTreeAsGit(t *testing.T) {
	// Open exports GIT_DIR and GIT_WORK_TREE for the git processes it
	// runs; each case starts without them.
	clean := func(t *testing.T) {
		for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE"} {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	type layout struct {
		name  string
		setup func(t *testing.T, w string) (from string, env []string)
	}
	git := func(t *testing.T, dir string, args ...string) { runGit(t, dir, args...) }
	mk := func(t *testing.T, dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	layouts := []layout{
		{"relative core.worktree", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta", w+"/wt")
			initRepo(t, w+"/meta", false)
			git(t, w+"/meta", "config", "core.worktree", "../../wt")
			return w + "/meta", nil
		}},
		{"absolute core.worktree, from a subfolder", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta/sub", w+"/wt")
			initRepo(t, w+"/meta", false)
			git(t, w+"/meta", "config", "core.worktree", w+"/wt")
			return w + "/meta/sub", nil
		}},
		{"core.worktree in an included file (git does not read it there)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta", w+"/wt")
			initRepo(t, w+"/meta", false)
			writeFile(t, w+"/inc.cfg", "[core]\n\tworktree = "+w+"/wt\n")
			git(t, w+"/meta", "config", "include.path", w+"/inc.cfg")
			return w + "/meta", nil
		}},
		{"inside a separate git dir naming no work tree (git has none there)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/sg", w+"/wt")
			git(t, w, "init", "-q", "--separate-git-dir", w+"/sg", w+"/wt")
			return w + "/sg", nil
		}},
		{"inside a git dir naming its work tree, from a folder of it (a submodule's .git/modules/NAME)", func(t *testing.T, w string) (string, []string) {
			// attack37e L1: refused as bare; git takes core.worktree there
			mk(t, w+"/sg", w+"/wt")
			git(t, w, "init", "-q", "--separate-git-dir", w+"/sg", w+"/wt")
			git(t, w+"/sg", "config", "core.worktree", w+"/wt")
			return w + "/sg/refs", nil
		}},
		{"separate git dir", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/s", w+"/o")
			git(t, w, "init", "-q", "--separate-git-dir", w+"/sg", w+"/s")
			git(t, w+"/s", "config", "core.worktree", w+"/o")
			return w + "/s", nil
		}},
		{"linked worktree ignores the common core.worktree", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/r", w+"/other")
			initRepo(t, w+"/r", true)
			git(t, w+"/r", "worktree", "add", "-q", "../l")
			git(t, w+"/r", "config", "core.worktree", w+"/other")
			return w + "/l", nil
		}},
		{"linked worktree with extensions.worktreeConfig", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/r", w+"/other", w+"/o2")
			initRepo(t, w+"/r", true)
			git(t, w+"/r", "worktree", "add", "-q", "../l")
			git(t, w+"/r", "config", "extensions.worktreeConfig", "true")
			git(t, w+"/l", "config", "--worktree", "core.worktree", w+"/o2")
			git(t, w+"/r", "config", "core.worktree", w+"/other")
			return w + "/l", nil
		}},
		{"core.bare with core.worktree (no work tree)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta", w+"/wt")
			initRepo(t, w+"/meta", false)
			git(t, w+"/meta", "config", "core.worktree", w+"/wt")
			git(t, w+"/meta", "config", "core.bare", "true")
			return w + "/meta", nil
		}},
		{"core.bare in a discovered .git (no work tree)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta")
			initRepo(t, w+"/meta", false)
			git(t, w+"/meta", "config", "core.bare", "true")
			return w + "/meta", nil
		}},
		{"$GIT_WORK_TREE with a discovered git dir", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta", w+"/wt")
			initRepo(t, w+"/meta", false)
			return w + "/meta", []string{"GIT_WORK_TREE", w + "/wt"}
		}},
		// git's setup_bare_git_dir: $GIT_WORK_TREE without $GIT_DIR makes
		// a discovered bare repository one with that work tree
		// (attack37 L5: refused as bare)
		{"$GIT_WORK_TREE with a discovered bare repository", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/wt")
			git(t, w, "init", "-q", "--bare", w+"/b.git")
			return w + "/b.git", []string{"GIT_WORK_TREE", w + "/wt"}
		}},
		{"relative $GIT_WORK_TREE with a discovered bare repository", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/wt")
			git(t, w, "init", "-q", "--bare", w+"/b.git")
			return w + "/b.git", []string{"GIT_WORK_TREE", "../wt"}
		}},
		{"$GIT_WORK_TREE with a bare repository discovered from its subfolder", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/wt")
			git(t, w, "init", "-q", "--bare", w+"/b.git")
			return w + "/b.git/refs", []string{"GIT_WORK_TREE", w + "/wt"}
		}},
		{"$GIT_WORK_TREE with a discovered bare repository naming core.worktree", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/wt", w+"/other")
			git(t, w, "init", "-q", "--bare", w+"/b.git")
			git(t, w+"/b.git", "config", "core.worktree", w+"/other")
			return w + "/b.git", []string{"GIT_WORK_TREE", w + "/wt"}
		}},
		{"a discovered bare repository without $GIT_WORK_TREE (no work tree)", func(t *testing.T, w string) (string, []string) {
			git(t, w, "init", "-q", "--bare", w+"/b.git")
			return w + "/b.git", nil
		}},
		// git's discovery looks at DIR/.git, then DIR itself, then the
		// parent: a bare repository nested in another repository's
		// folder is the bare one (attack37d M3: strata walked on to the
		// outer .git and recorded into it)
		{"$GIT_WORK_TREE with a bare repository nested in another repository", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/wt")
			mk(t, w+"/proj")
			initRepo(t, w+"/proj", true)
			git(t, w, "init", "-q", "--bare", w+"/proj/b.git")
			return w + "/proj/b.git", []string{"GIT_WORK_TREE", "../../wt"}
		}},
		{"$GIT_WORK_TREE with a nested bare repository, from its subfolder", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/wt")
			mk(t, w+"/proj")
			initRepo(t, w+"/proj", true)
			git(t, w, "init", "-q", "--bare", w+"/proj/b.git")
			return w + "/proj/b.git/refs/heads", []string{"GIT_WORK_TREE", w + "/wt"}
		}},
		{"a bare repository nested in another repository (no work tree)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/proj")
			initRepo(t, w+"/proj", true)
			git(t, w, "init", "-q", "--bare", w+"/proj/b.git")
			return w + "/proj/b.git", nil
		}},
		{"inside a .git directory (no work tree)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/proj")
			initRepo(t, w+"/proj", true)
			return w + "/proj/.git/refs", nil
		}},
		{"a work tree inside a bare repository's folder", func(t *testing.T, w string) (string, []string) {
			git(t, w, "init", "-q", "--bare", w+"/b.git")
			mk(t, w+"/b.git/inner")
			initRepo(t, w+"/b.git/inner", true)
			mk(t, w+"/b.git/inner/sub")
			return w + "/b.git/inner/sub", nil
		}},
		{"$GIT_DIR with core.bare and core.worktree (no work tree)", func(t *testing.T, w string) (string, []string) {
			mk(t, w+"/meta", w+"/wt")
			initRepo(t, w+"/meta", false)
			git(t, w+"/meta", "config", "core.worktree", w+"/wt")
			git(t, w+"/meta", "config", "core.bare", "true")
			return w, []string{"GIT_DIR", w + "/meta/.git"}
		}},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			clean(t)
			w := realPath(t, t.TempDir())
			from, env := l.setup(t, w)
			for i := 0; i+1 < len(env); i += 2 {
				t.Setenv(env[i], env[i+1])
			}
			want, gitErr := gitOut(from, nil, "rev-parse", "--show-toplevel")
			gd, _ := gitOut(from, nil, "rev-parse", "--absolute-git-dir") // before Open sets $GIT_DIR
			s, err := Open(from)
			if err == nil {
				defer s.Close()
			}
			switch {
			case gitErr != nil && err == nil:
				t.Fatalf("git finds no work tree (%v); Open took %s", gitErr, s.Root())
			case gitErr != nil && !errors.Is(err, state.ErrNotRepo):
				t.Fatalf("git finds no work tree; Open: %v, want ErrNotRepo", err)
			case gitErr == nil && err != nil:
				t.Fatalf("git's work tree is %s; Open: %v", want, err)
			case gitErr == nil && s.Root() != filepath.Clean(want):
				t.Fatalf("Root = %s, git's work tree is %s", s.Root(), want)
			}
			if err == nil {
				// the same repository, too: a work tree taken for another
				// repository's records into that one (attack37d M3)
				if s.GitDir() != realPath(t, gd) {
					t.Fatalf("GitDir = %s, git's is %s", s.GitDir(), gd)
				}
			}
		})
	}
}

// TestWorktreeName: a worktree id git takes for a ref component names its
// refs as it is (existing refs do not move); any other (git before 2.22
// kept a folder's name as it was: "my wt", "a:b", ".x", "x.lock") is
// escaped into a component git takes, each to its own, as `git
// check-ref-format` judges (attack37 M2: the id was used as it was, and
// every record was lost on a ref git and strata could not read).
func TestWorktreeName(t *testing.T) {
	valid := []string{"wt", "linked", "my-wt", "a.b", "wt2", "%", "a%20b", "h\u00e9llo", "@", "x@y", "a_b", "A.B-c", "x.", "x.lock."}
	invalid := []string{"my wt", "a:b", "a..b", ".hidden", "x.lock", "a[b", "a?b", "a*b", "a~b", "a^b",
		`a\b`, "tab\tx", "a@{b", "\x7f", "..", ".", "a.lock.lock", "my%20wt "}
	dir := t.TempDir()
	checks := func(ref string) bool {
		_, err := gitOut(dir, nil, "check-ref-format", ref)
		return err == nil
	}
	for _, id := range valid {
		if got := WorktreeName(id); got != id {
			t.Errorf("WorktreeName(%q) = %q, want it as it is", id, got)
		}
		if !checks("refs/strata/worktrees/" + id + "/state") {
			t.Errorf("test case %q: git refuses it", id)
		}
	}
	seen := map[string]string{}
	for _, id := range invalid {
		if checks("refs/strata/worktrees/" + id + "/state") {
			t.Errorf("test case %q: git takes it", id)
		}
		got := WorktreeName(id)
		if !checks("refs/strata/worktrees/"+got+"/home/rejected") || strings.Contains(got, "/") {
			t.Errorf("WorktreeName(%q) = %q, which git refuses as a ref component", id, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("WorktreeName(%q) = WorktreeName(%q) = %q", id, other, got)
		}
		seen[got] = id
	}
}

// TestWorktreeIdNoRefName: a linked worktree whose id git takes for no
// ref component records on the escaped id, reads back what it recorded,
// and git sees the ref; an id whose escaped form is another worktree's id
// is refused with one line before anything is written (attack37 M2).
func TestWorktreeIdNoRefName(t *testing.T) {
	base := realPath(t, t.TempDir())
	main := filepath.Join(base, "main")
	if err := os.Mkdir(main, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, main, true)
	wt := filepath.Join(base, "my wt")
	runGit(t, main, "worktree", "add", "-q", "--detach", wt)
	gitDir := filepath.Join(main, ".git", "worktrees", "my wt")
	if err := os.Rename(filepath.Join(main, ".git", "worktrees", "my-wt"), gitDir); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+gitDir+"\n")

	s, err := Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.StateRef(), "refs/strata/worktrees/my%20wt/state"; got != want {
		t.Fatalf("StateRef = %q, want %q", got, want)
	}
	head := mustRecord(t, s, change(".claude/notes.json", `{"v":1}`, t0))[0].Commit
	s.Close()
	s, err = Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Head(s.StateRef()); err != nil || got != head {
		t.Fatalf("reopened: Head = %q, %v, want %s", got, err, head)
	}
	s.Close()
	if got := runGit(t, main, "rev-parse", "--verify", "refs/strata/worktrees/my%20wt/state"); got != head {
		t.Fatalf("git rev-parse = %q, want %s", got, head)
	}

	// another worktree whose id is the escaped one
	runGit(t, main, "worktree", "add", "-q", "--detach", filepath.Join(base, "my%20wt"))
	_, err = Open(wt)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `linked worktree "my wt"`) || !strings.Contains(err.Error(), "my%20wt, the id of another linked worktree") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Open with an id escaped into another's = %v, want a one-line *FormatError naming both", err)
	}
	// and the other way: the worktree whose valid id is the escaped one
	// does not take "my wt"'s history (attack37d L4)
	_, err = Open(filepath.Join(base, "my%20wt"))
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `linked worktree "my%20wt"`) || !strings.Contains(err.Error(), `another linked worktree, "my wt"`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Open of the worktree whose id is another's escaped id = %v, want a one-line *FormatError naming both", err)
	}
	// a valid id with % whose unescaped form is no worktree, or one that
	// escapes to another component, is taken as it is
	for _, id := range []string{"x%20y", "my%2Dwt"} {
		dir := filepath.Join(base, id)
		runGit(t, main, "worktree", "add", "-q", "--detach", dir)
		if id == "my%2Dwt" {
			runGit(t, main, "worktree", "add", "-q", "--detach", filepath.Join(base, "my-wt"))
		}
		s, err := Open(dir)
		if err != nil {
			t.Fatalf("Open(%s): %v", id, err)
		}
		if got, want := s.StateRef(), "refs/strata/worktrees/"+id+"/state"; got != want {
			t.Fatalf("StateRef = %q, want %q", got, want)
		}
		s.Close()
	}
}

// TestSafeBareRepository: with safe.bareRepository=explicit in protected
// config (global, `git -c`, $GIT_CONFIG_COUNT), a bare repository found by
// discovery is refused as git 2.38+ refuses it, $GIT_WORK_TREE or not,
// before anything of it is read; the repository's own config cannot set
// it, and a repository named by $GIT_DIR is used (attack37d M1: taken with
// $GIT_WORK_TREE, and recorded into).
func TestSafeBareRepository(t *testing.T) {
	// Open exports GIT_DIR and GIT_WORK_TREE; each case starts without
	// them, as without the command-line config
	clean := func(t *testing.T) {
		for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	cases := []struct {
		name    string
		global  string   // the global config's text
		env     []string // pairs
		own     bool     // safe.bareRepository=explicit in b.git's own config
		from    string   // relative to the temp dir
		refused bool
	}{
		{"global, with $GIT_WORK_TREE", "[safe]\n\tbareRepository = explicit\n", []string{"GIT_WORK_TREE", "../wt"}, false, "b.git", true},
		{"global, from a subfolder", "[safe]\n\tbareRepository = explicit\n", []string{"GIT_WORK_TREE", "../../wt"}, false, "b.git/refs", true},
		{"global, nested in another repository", "[safe]\n\tbareRepository = explicit\n", []string{"GIT_WORK_TREE", "../../wt"}, false, "proj/b.git", true},
		{"git -c", "", []string{"GIT_WORK_TREE", "../wt", "GIT_CONFIG_PARAMETERS", "'safe.bareRepository'='explicit'"}, false, "b.git", true},
		{"GIT_CONFIG_COUNT", "", []string{"GIT_WORK_TREE", "../wt", "GIT_CONFIG_COUNT", "1", "GIT_CONFIG_KEY_0", "safe.bareRepository", "GIT_CONFIG_VALUE_0", "explicit"}, false, "b.git", true},
		{"git -c all after global explicit", "[safe]\n\tbareRepository = explicit\n", []string{"GIT_WORK_TREE", "../wt", "GIT_CONFIG_PARAMETERS", "'safe.bareRepository'='all'"}, false, "b.git", false},
		{"the repository's own config is not read", "", []string{"GIT_WORK_TREE", "../wt"}, true, "b.git", false},
		{"named by $GIT_DIR", "[safe]\n\tbareRepository = explicit\n", []string{"GIT_DIR", "b.git", "GIT_WORK_TREE", "wt"}, false, ".", false},
		{"a work tree's .git is no bare repository", "[safe]\n\tbareRepository = explicit\n", nil, false, "proj", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clean(t)
			w := realPath(t, t.TempDir())
			for _, d := range []string{w + "/wt", w + "/proj"} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			initRepo(t, w+"/proj", true)
			runGit(t, w, "init", "-q", "--bare", w+"/b.git")
			runGit(t, w, "init", "-q", "--bare", w+"/proj/b.git")
			if c.own {
				runGit(t, w+"/b.git", "config", "safe.bareRepository", "explicit")
			}
			writeFile(t, w+"/global", c.global)
			t.Setenv("GIT_CONFIG_GLOBAL", w+"/global")
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			for i := 0; i+1 < len(c.env); i += 2 {
				t.Setenv(c.env[i], c.env[i+1])
			}
			from := filepath.Join(w, c.from)
			_, gitErr := gitOut(from, nil, "rev-parse", "--absolute-git-dir")
			if (gitErr != nil) != c.refused {
				t.Fatalf("test case: git refused: %v", gitErr)
			}
			s, err := Open(from)
			if err == nil {
				s.Close()
			}
			switch {
			case c.refused && err == nil:
				t.Fatalf("git refuses it (%v); Open took %s", gitErr, s.GitDir())
			case c.refused && (!errors.Is(err, state.ErrNotRepo) || !strings.Contains(err.Error(), "safe.bareRepository is 'explicit'")):
				t.Fatalf("Open: %v, want git's refusal", err)
			case !c.refused && err != nil:
				t.Fatalf("Open: %v", err)
			}
		})
	}
}

// TestSafeBareRepositoryBadValue: a safe.bareRepository git cannot read
// ("Explicit") makes git die where it finds a bare repository, and strata
// refuses it there with a *FormatError; a work tree's repository is taken,
// as git takes it (the setting is read only for a bare one).
func TestSafeBareRepositoryBadValue(t *testing.T) {
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	w := realPath(t, t.TempDir())
	if err := os.MkdirAll(w+"/proj", 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, w+"/proj", true)
	runGit(t, w, "init", "-q", "--bare", w+"/b.git")
	writeFile(t, w+"/global", "[safe]\n\tbareRepository = Explicit\n")
	t.Setenv("GIT_CONFIG_GLOBAL", w+"/global")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	if _, err := gitOut(w+"/b.git", nil, "rev-parse", "--git-dir"); err == nil {
		t.Fatal("test case: git takes it")
	}
	var fe *FormatError
	if s, err := Open(w + "/b.git"); !errors.As(err, &fe) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open: %v, want a *FormatError", err)
	}
	s, err := Open(w + "/proj")
	if err != nil {
		t.Fatalf("Open(proj): %v", err)
	}
	s.Close()
}
