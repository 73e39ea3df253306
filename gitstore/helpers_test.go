package gitstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// gitEnv isolates the git CLI the tests run from the machine's config.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test User", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test User", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
}

// runGit runs the real git CLI in dir and returns its trimmed stdout.
func runGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := gitOut(dir, nil, args...)
	if err != nil {
		tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func gitOut(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(os.TempDir())
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// testRepo is one repository layout the suite runs against.
type testRepo struct {
	kind    string
	main    string // the main work tree
	open    string // the directory Open is called with
	wt      string // the work tree Open should find
	gitDir  string
	common  string
	ref     string // the expected state ref
	commits bool   // whether the user has commits (HEAD resolves)
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func realPath(tb testing.TB, p string) string {
	tb.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func initRepo(tb testing.TB, dir string, commit bool) {
	tb.Helper()
	runGit(tb, dir, "init", "-q", "-b", "main", ".")
	if commit {
		writeFile(tb, filepath.Join(dir, "README.md"), "hello\n")
		writeFile(tb, filepath.Join(dir, ".claude", "workflow-state.json"), `{"committed":true}`)
		runGit(tb, dir, "add", "-A")
		runGit(tb, dir, "commit", "-q", "-m", "initial")
		writeFile(tb, filepath.Join(dir, "README.md"), "hello again\n")
		runGit(tb, dir, "commit", "-q", "-am", "second")
		runGit(tb, dir, "branch", "feature")
		writeFile(tb, filepath.Join(dir, "untracked.txt"), "local edit\n")
	}
}

// repoKinds are the layouts every suite test runs against.
// anySize is a read limit no test's file reaches.
const anySize = 1 << 30

var repoKinds = []string{"plain", "empty", "worktree", "subdir", "shared"}

func newTestRepo(tb testing.TB, kind string) *testRepo {
	tb.Helper()
	base := realPath(tb, tb.TempDir())
	tb.Cleanup(WaitHousekeeping) // a background repack still writing in base fails its removal
	main := filepath.Join(base, "repo")
	if err := os.MkdirAll(main, 0o755); err != nil {
		tb.Fatal(err)
	}
	r := &testRepo{kind: kind, main: main, open: main, wt: main,
		gitDir: filepath.Join(main, ".git"), common: filepath.Join(main, ".git"),
		ref: "refs/strata/state", commits: true}
	switch kind {
	case "plain":
		initRepo(tb, main, true)
	case "empty":
		initRepo(tb, main, false)
		r.commits = false
	case "worktree":
		initRepo(tb, main, true)
		wt := filepath.Join(base, "linked")
		runGit(tb, main, "worktree", "add", "-q", "-b", "wtbranch", wt)
		r.open, r.wt = wt, wt
		r.gitDir = filepath.Join(main, ".git", "worktrees", "linked")
		r.ref = "refs/strata/worktrees/linked/state"
	case "subdir":
		initRepo(tb, main, true)
		sub := filepath.Join(main, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			tb.Fatal(err)
		}
		r.open = sub
	case "shared":
		// a clone made with --shared: the user's commits and the blobs of
		// their files are read through objects/info/alternates (the
		// repository cloned), packed there, with nothing copied
		orig := filepath.Join(base, "orig")
		if err := os.MkdirAll(orig, 0o755); err != nil {
			tb.Fatal(err)
		}
		initRepo(tb, orig, true)
		runGit(tb, orig, "gc", "-q")
		runGit(tb, base, "clone", "-q", "--shared", orig, main)
		writeFile(tb, filepath.Join(main, "untracked.txt"), "local edit\n")
		runGit(tb, main, "branch", "feature", "origin/feature")
		if b, err := os.ReadFile(filepath.Join(main, ".git", "objects", "info", "alternates")); err != nil || len(b) == 0 {
			tb.Fatalf("clone --shared wrote no alternates: %v", err)
		}
	default:
		tb.Fatalf("unknown kind %s", kind)
	}
	return r
}

// forEachRepo runs f as a subtest against every repository layout.
func forEachRepo(t *testing.T, f func(t *testing.T, r *testRepo, s *Store)) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t, kind)
			snap := r.snapshot(t)
			s, err := Open(r.open)
			if err != nil {
				t.Fatal(err)
			}
			f(t, r, s)
			r.checkInvariants(t, snap)
		})
	}
}

// userState is everything of the user's that recording must not touch.
type userState struct {
	head, index, config, refs string
	files                     map[string]string
}

func (r *testRepo) snapshot(tb testing.TB) userState {
	tb.Helper()
	var u userState
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			tb.Fatal(err)
		}
		return string(b)
	}
	u.head = read(filepath.Join(r.gitDir, "HEAD"))
	u.index = read(filepath.Join(r.gitDir, "index"))
	u.config = read(filepath.Join(r.common, "config"))
	u.refs = runGit(tb, r.wt, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags")
	u.files = map[string]string{}
	filepath.WalkDir(r.wt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			u.files[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	return u
}

// checkInvariants fails the test when the repository does not pass
// `git fsck --strict` or when anything of the user's changed.
func (r *testRepo) checkInvariants(tb testing.TB, before userState) {
	tb.Helper()
	fsck(tb, r.wt)
	after := r.snapshot(tb)
	if after.head != before.head {
		tb.Errorf("HEAD changed: %q -> %q", before.head, after.head)
	}
	if after.index != before.index {
		tb.Errorf("index changed")
	}
	if after.config != before.config {
		tb.Errorf("config changed")
	}
	if after.refs != before.refs {
		tb.Errorf("branches changed:\n%s\n->\n%s", before.refs, after.refs)
	}
	if fmt.Sprint(sorted(after.files)) != fmt.Sprint(sorted(before.files)) {
		tb.Errorf("work tree changed")
	}
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func fsck(tb testing.TB, dir string) {
	tb.Helper()
	WaitHousekeeping()
	if out, err := gitOut(dir, nil, "fsck", "--strict", "--no-progress", "--no-dangling"); err != nil {
		tb.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// change builds a test change.
func change(path, content string, at time.Time) state.Change {
	return state.Change{Path: path, Content: []byte(content), Class: state.ClassWorkflowState,
		Schema: "workflow-state", Source: state.SourceWatch, Time: at}
}

func deletion(path string, at time.Time) state.Change {
	return state.Change{Path: path, Deleted: true, Class: state.ClassWorkflowState,
		Schema: "workflow-state", Source: state.SourceWatch, Time: at}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func mustRecord(tb testing.TB, s *Store, chs ...state.Change) []state.Entry {
	tb.Helper()
	es, err := s.Record(chs...)
	if err != nil {
		tb.Fatalf("record: %v", err)
	}
	return es
}
