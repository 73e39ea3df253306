package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// TestOwnershipLikeGit takes every path for another user's
// (GIT_TEST_ASSUME_DIFFERENT_OWNER, as git's own tests do) and checks that
// Open refuses the repository exactly when git does, for each way of
// writing safe.directory.
func TestOwnershipLikeGit(t *testing.T) {
	testOwner = true
	t.Cleanup(func() { testOwner = false })
	base := realPath(t, t.TempDir())
	root := filepath.Join(base, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, root, true)
	linked := filepath.Join(base, "linked")
	runGit(t, root, "worktree", "add", "-q", linked)
	global := filepath.Join(base, "global")
	other := filepath.Join(base, "other")
	// a bare repository taken with $GIT_WORK_TREE: git names it by its
	// git directory (attack37d L3: compared with "", and its fix named
	// safe.directory '')
	bare, wt := filepath.Join(base, "b.git"), filepath.Join(base, "wt")
	runGit(t, base, "init", "-q", "--bare", bare)
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name   string
		dir    string // where strata and git run (default root)
		global string // the global config file
		repo   string // the repository's own config, appended
		env    []string
	}{
		{name: "none"},
		{name: "exact", global: "[safe]\n\tdirectory = " + root},
		{name: "trailing slash", global: "[safe]\n\tdirectory = " + root + "/"},
		{name: "star", global: "[safe]\n\tdirectory = *"},
		{name: "star then reset", global: "[safe]\n\tdirectory = *\n\tdirectory =\n"},
		{name: "star then key alone", global: "[safe]\n\tdirectory = *\n\tdirectory\n"},
		{name: "reset then exact", global: "[safe]\n\tdirectory = *\n\tdirectory =\n\tdirectory = " + root},
		{name: "parent with /*", global: "[safe]\n\tdirectory = " + base + "/*"},
		{name: "itself with /*", global: "[safe]\n\tdirectory = " + root + "/*"},
		{name: "the .git dir", global: "[safe]\n\tdirectory = " + root + "/.git"},
		{name: "home", global: "[safe]\n\tdirectory = ~/repo", env: []string{"HOME=" + base}},
		{name: "not normalised", global: "[safe]\n\tdirectory = " + base + "/./repo"},
		{name: "include", global: "[include]\n\tpath = other", env: []string{"OTHER=[safe]\n\tdirectory = " + root}},
		{name: "repository config", repo: "[safe]\n\tdirectory = *"},
		{name: "count", env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=" + root}},
		{name: "parameters", env: []string{"GIT_CONFIG_PARAMETERS='safe.directory'='" + root + "'"}},
		{name: "old parameters", env: []string{"GIT_CONFIG_PARAMETERS='safe.directory=*'"}},
		{name: "parameters reset", global: "[safe]\n\tdirectory = *", env: []string{"GIT_CONFIG_PARAMETERS='safe.directory'="}},
		{name: "linked, main named", dir: linked, global: "[safe]\n\tdirectory = " + root},
		{name: "linked, itself named", dir: linked, global: "[safe]\n\tdirectory = " + linked},
		{name: "bare with $GIT_WORK_TREE", dir: bare, env: []string{"GIT_WORK_TREE=" + wt}},
		{name: "bare with $GIT_WORK_TREE, itself named", dir: bare, global: "[safe]\n\tdirectory = " + bare, env: []string{"GIT_WORK_TREE=" + wt}},
		{name: "bare with $GIT_WORK_TREE, from a subfolder", dir: filepath.Join(bare, "refs"), global: "[safe]\n\tdirectory = " + bare, env: []string{"GIT_WORK_TREE=" + wt}},
		{name: "bare with $GIT_WORK_TREE, the work tree named", dir: bare, global: "[safe]\n\tdirectory = " + wt, env: []string{"GIT_WORK_TREE=" + wt}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE"} { // Open exports them
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			dir := root
			if c.dir != "" {
				dir = c.dir
			}
			if err := os.WriteFile(global, []byte(c.global+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(root, ".git", "config")
			orig, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.WriteFile(cfg, orig, 0o644) })
			if c.repo != "" {
				os.WriteFile(cfg, append(orig, "\n"+c.repo+"\n"...), 0o644)
			}
			t.Setenv("GIT_CONFIG_GLOBAL", global)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			t.Setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
			for _, kv := range c.env {
				k, v, _ := strings.Cut(kv, "=")
				if k == "OTHER" {
					os.WriteFile(other, []byte(v+"\n"), 0o644)
					continue
				}
				t.Setenv(k, v)
			}
			git := exec.Command("git", "status", "--porcelain")
			git.Dir = dir
			out, gitErr := git.CombinedOutput()
			gitRefuses := gitErr != nil
			if gitRefuses && !strings.Contains(string(out), "dubious ownership") {
				t.Fatalf("git status: %v: %s", gitErr, out)
			}

			t.Logf("git refuses: %v", gitRefuses)
			s, err := Open(dir)
			if err == nil {
				s.Close()
			}
			var oe *state.OwnershipError
			if refuses := errors.As(err, &oe); refuses != gitRefuses {
				t.Fatalf("strata refuses: %v (%v); git refuses: %v (%s)", refuses, err, gitRefuses, out)
			}
			if err != nil && !errors.As(err, &oe) {
				t.Fatalf("Open: %v", err)
			}
			if oe != nil {
				if !errors.Is(err, state.ErrNotRepo) || oe.Dir != dir {
					t.Fatalf("error %v names %q, want %q and ErrNotRepo", err, oe.Dir, dir)
				}
				if want := "git config --global --add safe.directory " + dir; !strings.Contains(string(out), want) || !strings.HasSuffix(err.Error(), want) {
					t.Fatalf("strata says %q, git says %q; both should end with %q", err, out, want)
				}
			}
		})
	}
}

// TestOwnershipAsRoot, run as root, gives a repository to uid 1234 (all of
// it, or only its .git) and checks that Open refuses it as git does, and
// takes it when SUDO_UID names that user (git ≥ 2.35.3) or safe.directory
// names it.
func TestOwnershipAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a repository to another user")
	}
	base := realPath(t, t.TempDir())
	root := filepath.Join(base, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, root, true)
	global := filepath.Join(base, "global")
	os.WriteFile(global, nil, 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("SUDO_UID", "")
	chown := func(paths ...string) {
		t.Helper()
		if out, err := exec.Command("chown", append([]string{"-R", "1234:1234"}, paths...)...).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v: %s", err, out)
		}
	}
	open := func() error {
		s, err := Open(root)
		if err == nil {
			s.Close()
		}
		return err
	}
	gitRefuses := func() bool {
		git := exec.Command("git", "status", "--porcelain")
		git.Dir = root
		return git.Run() != nil
	}

	chown(filepath.Join(root, ".git"))
	var oe *state.OwnershipError
	if err := open(); !errors.As(err, &oe) || oe.Path != filepath.Join(root, ".git") || oe.Owner != 1234 || oe.UID != 0 || !gitRefuses() {
		t.Fatalf("only .git given away: Open = %v; git refuses: %v", err, gitRefuses())
	}
	chown(root)
	if err := open(); !errors.As(err, &oe) || oe.Path != root || !gitRefuses() {
		t.Fatalf("all given away: Open = %v; git refuses: %v", err, gitRefuses())
	}
	t.Setenv("SUDO_UID", "999")
	if err := open(); !errors.As(err, &oe) || oe.UID != 999 || !gitRefuses() {
		t.Fatalf("SUDO_UID=999: Open = %v; git refuses: %v", err, gitRefuses())
	}
	t.Setenv("SUDO_UID", "1234")
	if err := open(); err != nil || gitRefuses() {
		t.Fatalf("SUDO_UID=1234: Open = %v; git refuses: %v", err, gitRefuses())
	}
	t.Setenv("SUDO_UID", "")
	os.WriteFile(global, []byte("[safe]\n\tdirectory = "+root+"\n"), 0o644)
	if err := open(); err != nil || gitRefuses() {
		t.Fatalf("safe.directory: Open = %v; git refuses: %v", err, gitRefuses())
	}
}

// TestSudoWritesNothing, run as root, opens a repository of uid 1234 as
// sudo runs strata for that user (SUDO_UID): the Store says so (Sudo),
// refuses to record (ErrSudo), reads what the owner recorded without
// keeping its time index, and leaves no file or directory of root's in the
// repository, found by discovery or named by $GIT_DIR (attack31 F6).
func TestSudoWritesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a repository to another user")
	}
	base := realPath(t, t.TempDir())
	root := filepath.Join(base, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, root, true)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("SUDO_UID", "")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sudo() != 0 {
		t.Fatalf("root's own repository: Sudo = %d", s.Sudo())
	}
	mustRecord(t, s, change(".claude/state.json", `{"a":1}`, t0))
	s.Close()
	os.RemoveAll(filepath.Join(root, ".git", "strata", "index"))
	if out, err := exec.Command("chown", "-R", "1234:1234", root).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v: %s", err, out)
	}
	t.Setenv("SUDO_UID", "1234")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE"} { // Open exports both under $GIT_DIR
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for _, gitDir := range []string{"", filepath.Join(root, ".git")} {
		if gitDir != "" {
			os.Setenv("GIT_DIR", gitDir)
		}
		s, err := Open(root)
		if err != nil {
			t.Fatalf("GIT_DIR=%q: %v", gitDir, err)
		}
		if s.Sudo() != 1234 {
			t.Errorf("GIT_DIR=%q: Sudo = %d, want 1234", gitDir, s.Sudo())
		}
		if _, err := s.Record(change(".claude/state.json", `{"a":2}`, t0.Add(time.Minute))); !errors.Is(err, ErrSudo) {
			t.Errorf("GIT_DIR=%q: Record = %v, want ErrSudo", gitDir, err)
		}
		es, err := s.Log(s.StateRef(), LogQuery{})
		if err != nil || len(es) != 1 {
			t.Errorf("GIT_DIR=%q: Log = %v, %v", gitDir, es, err)
		}
		s.Close()
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if owner, _ := fileOwner(p); owner != 1234 {
				t.Errorf("GIT_DIR=%q: %s is uid %d's", gitDir, p, owner)
			}
			return nil
		})
	}
}

// TestOwnershipUnderSudoSaysRoot, run as root with $SUDO_UID=1234, opens a
// repository of the sudo user, of root and of a third user (uid 1000): the
// first is the sudo user's (Sudo), the second root's own, and the third
// refused as git refuses it, saying strata runs as root through sudo for
// uid 1234, never that it runs as uid 1234.
func TestOwnershipUnderSudoSaysRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a repository to another user")
	}
	base := realPath(t, t.TempDir())
	root := filepath.Join(base, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, root, true)
	global := filepath.Join(base, "global")
	os.WriteFile(global, nil, 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("SUDO_UID", "1234")
	give := func(uid string) {
		t.Helper()
		if out, err := exec.Command("chown", "-R", uid+":"+uid, root).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v: %s", err, out)
		}
	}
	gitRefuses := func() bool {
		git := exec.Command("git", "status", "--porcelain")
		git.Dir = root
		return git.Run() != nil
	}
	for _, c := range []struct {
		owner string
		sudo  int
	}{{"0", 0}, {"1234", 1234}} {
		give(c.owner)
		s, err := Open(root)
		if err != nil || gitRefuses() {
			t.Fatalf("owned by uid %s: Open = %v; git refuses: %v", c.owner, err, gitRefuses())
		}
		if s.Sudo() != c.sudo {
			t.Errorf("owned by uid %s: Sudo = %d, want %d", c.owner, s.Sudo(), c.sudo)
		}
		s.Close()
	}
	give("1000")
	_, err := Open(root)
	want := root + ": dubious ownership (" + root + " is owned by uid 1000, neither by root, which strata runs as through sudo, nor by uid 1234, the user sudo runs it for): git refuses such a repository and so does strata; to trust it: git config --global --add safe.directory " + root
	var oe *state.OwnershipError
	if !errors.As(err, &oe) || err.Error() != want || !gitRefuses() {
		t.Fatalf("owned by a third user: Open =\n%v\nwant\n%s\n(git refuses: %v)", err, want, gitRefuses())
	}
	// $SUDO_UID 0 names root: strata runs as uid 0, and says so
	t.Setenv("SUDO_UID", "0")
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "is owned by uid 1000, strata runs as uid 0)") {
		t.Fatalf("SUDO_UID=0: Open = %v", err)
	}
}
