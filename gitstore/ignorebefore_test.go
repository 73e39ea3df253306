package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// ignoredBeforeRepo is a repository whose first commit ignores secret/
// and, in sub/.gitignore, *.key; strata has seen it (IgnoredBefore asked
// once). It returns the first commit.
func ignoredBeforeRepo(t *testing.T) (dir, first string) {
	t.Helper()
	dir = realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(dir, ".gitignore"), "secret/\n*.log\n")
	writeFile(t, filepath.Join(dir, "sub", ".gitignore"), "*.key\n")
	writeFile(t, filepath.Join(dir, "sub", "keep.md"), "x\n")
	writeFile(t, filepath.Join(dir, "secret", "tracked.json"), "{}\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "add", "-f", "secret/tracked.json")
	runGit(t, dir, "commit", "-q", "-m", "first")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if at := s.Ignores().IgnoredBefore("secret/a.json"); at != "" {
		t.Fatalf("secret/a.json is ignored now: IgnoredBefore %q, want \"\"", at)
	}
	s.Close()
	return dir, strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
}

// TestIgnoredBeforeKeepsEarlierRules: a commit that drops the lines and the
// nested .gitignore leaves the files those ignored private, named by the
// earlier commit, while a tracked file and a file no rule ignored are not;
// the local ref keeps only the earlier commit's .gitignore files.
func TestIgnoredBeforeKeepsEarlierRules(t *testing.T) {
	dir, first := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	runGit(t, dir, "rm", "-q", "sub/.gitignore")
	runGit(t, dir, "commit", "-q", "-am", "un-ignore")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig := s.Ignores()
	for p, want := range map[string]string{
		"secret/a.json":       first[:10],
		"sub/id.key":          first[:10],
		"secret/tracked.json": "",
		"other.json":          "",
		"sub/keep.md":         "",
		"x.log":               "", // ignored now: Ignored says so
	} {
		if got := ig.IgnoredBefore(p); got != want {
			t.Errorf("IgnoredBefore(%s) = %q, want %q", p, got, want)
		}
	}
	files := runGit(t, dir, "ls-tree", "-r", "--name-only", "refs/strata/gitrules")
	if want := first + "/.gitignore\n" + first + "/sub/.gitignore"; strings.TrimSpace(files) != want {
		t.Errorf("refs/strata/gitrules holds\n%s, want\n%s", files, want)
	}
}

// TestIgnoredBeforeHeadOnDisk: a .gitignore edited on disk (a pull waiting
// for its merge commit) does not un-ignore what HEAD's ignores.
func TestIgnoredBeforeHeadOnDisk(t *testing.T) {
	dir, _ := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "secret/\n!secret/\n")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("secret/a.json"); got != "HEAD" {
		t.Errorf("IgnoredBefore = %q, want HEAD", got)
	}
}

// TestIgnoredBeforeReflog: where strata never ran, the commits HEAD's
// reflog names count; and moves strata did not see (two pulls between two
// runs) count too.
func TestIgnoredBeforeReflog(t *testing.T) {
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(dir, ".gitignore"), "prod.env\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "ignore")
	first := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(dir, ".gitignore"), "")
	runGit(t, dir, "commit", "-q", "-am", "drop")
	writeFile(t, filepath.Join(dir, "README"), "x\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "more")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("prod.env"); got != first[:10] {
		t.Errorf("first run: IgnoredBefore = %q, want %q", got, first[:10])
	}

	// strata saw a HEAD that ignores nothing; .gitignore then ignores
	// b.env and is emptied again, in two commits it does not see
	writeFile(t, filepath.Join(dir, ".gitignore"), "b.env\n")
	runGit(t, dir, "commit", "-q", "-am", "ignore b")
	second := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(dir, ".gitignore"), "")
	runGit(t, dir, "commit", "-q", "-am", "drop b")
	if got := s.Ignores().IgnoredBefore("b.env"); got != second[:10] {
		t.Errorf("after two unseen moves: IgnoredBefore = %q, want %q", got, second[:10])
	}
}

// TestIgnoredBeforeKeepsEachSetOnce: moving HEAD back and forth between two
// .gitignore versions keeps each once.
func TestIgnoredBeforeKeepsEachSetOnce(t *testing.T) {
	dir, _ := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	runGit(t, dir, "commit", "-q", "-am", "un-ignore")
	for i := 0; i < 4; i++ {
		runGit(t, dir, "checkout", "-q", "HEAD~1")
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Ignores().IgnoredBefore("secret/a.json")
		s.Close()
		runGit(t, dir, "checkout", "-q", "-")
		if s, err = Open(dir); err != nil {
			t.Fatal(err)
		}
		s.Ignores().IgnoredBefore("secret/a.json")
		s.Close()
	}
	sets := runGit(t, dir, "ls-tree", "refs/strata/gitrules")
	if n := len(strings.Split(strings.TrimSpace(sets), "\n")); n != 2 {
		t.Errorf("refs/strata/gitrules keeps %d sets, want 2:\n%s", n, sets)
	}
}

// TestIgnoredBeforeSharedTrees: a pushed tree of 40 levels, each holding
// the next twice (2^40 paths, a few objects), is compared and kept in
// linear time, not walked path by path.
func TestIgnoredBeforeSharedTrees(t *testing.T) {
	dir, first := ignoredBeforeRepo(t)
	blob := strings.TrimSpace(runGit(t, dir, "hash-object", "-w", filepath.Join(dir, ".gitignore")))
	tree := mktree(t, dir, fmt.Sprintf("100644 blob %s\t.gitignore\n", blob))
	for i := 0; i < 40; i++ {
		tree = mktree(t, dir, fmt.Sprintf("040000 tree %s\ta\n040000 tree %s\tb\n", tree, tree))
	}
	c := strings.TrimSpace(runGit(t, dir, "commit-tree", tree, "-p", first, "-m", "wide"))
	// strata saw the wide commit, then HEAD went back, and the other way
	for _, heads := range [][2]string{{c, first}, {first, c}} {
		runGit(t, dir, "update-ref", "--no-deref", "HEAD", heads[0])
		os.Remove(filepath.Join(dir, ".git", "strata", "gitrules-head"))
		os.Remove(filepath.Join(dir, ".git", "logs", "HEAD"))
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Ignores().IgnoredBefore("other.json")
		s.Close()
		runGit(t, dir, "update-ref", "--no-deref", "HEAD", heads[1])
		if s, err = Open(dir); err != nil {
			t.Fatal(err)
		}
		s.Ignores().IgnoredBefore("other.json")
		s.Close()
	}
	if sets := runGit(t, dir, "ls-tree", "refs/strata/gitrules"); !strings.Contains(sets, c) || !strings.Contains(sets, first) {
		t.Errorf("refs/strata/gitrules keeps\n%s, want both commits", sets)
	}
	// too many paths to index: noted so, not tried again by each command
	kept := plumbing.NewHash(strings.TrimSpace(runGit(t, dir, "rev-parse", "refs/strata/gitrules")))
	data, _ := os.ReadFile(filepath.Join(dir, ".git", "strata", "gitrules-index"))
	if x, at, ok := parseKeptIndex(data); !ok || at != kept || x != nil {
		t.Errorf("gitrules-index: %v, %v; want it to say the sets are too large to index", x, ok)
	}
}

// TestIgnoredBeforeUnreadable: when the kept rule sets cannot be read, an
// untracked file counts as ignored by them: it stays private.
func TestIgnoredBeforeUnreadable(t *testing.T) {
	dir, _ := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".git", "refs", "strata", "gitrules"), strings.Repeat("ab", 20)+"\n")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig := s.Ignores()
	if got := ig.IgnoredBefore("other.json"); !strings.HasPrefix(got, "? (refs/strata/gitrules unreadable") {
		t.Errorf("IgnoredBefore = %q, want the unreadable ref named", got)
	}
	if got := ig.IgnoredBefore("secret/tracked.json"); got != "" {
		t.Errorf("a tracked file: IgnoredBefore = %q, want \"\"", got)
	}
}

// TestIgnoredBeforeHeadCommitMissing: a HEAD naming a commit the object
// store lacks (a clone made with --shared whose source moved away; a
// detached HEAD or a branch naming a pruned commit) is not an unborn
// branch: its .gitignore files cannot be read, so every untracked file
// counts as ignored by them, as when HEAD's tree is missing (attack31 F2:
// the file HEAD's .gitignore ignored was recorded and synced). An unborn
// branch ignores nothing.
func TestIgnoredBeforeHeadCommitMissing(t *testing.T) {
	asks := func(t *testing.T, dir string, want map[string]string) {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ig := s.Ignores()
		for p, w := range want {
			got := ig.IgnoredBefore(p)
			if w == "unreadable" && !strings.HasPrefix(got, "? (HEAD unreadable: its commit ") || w != "unreadable" && got != w {
				t.Errorf("IgnoredBefore(%s) = %q, want %s", p, got, w)
			}
		}
	}
	unreadable := map[string]string{"secret.json": "unreadable", "other.json": "unreadable"}
	base := realPath(t, t.TempDir())
	src := filepath.Join(base, "src")
	runGit(t, base, "init", "-q", src)
	writeFile(t, filepath.Join(src, ".gitignore"), "secret.json\n")
	runGit(t, src, "add", "-A")
	runGit(t, src, "commit", "-q", "-m", "ignore it")
	head := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	clone := filepath.Join(base, "clone")
	runGit(t, base, "clone", "-q", "--shared", src, clone)
	writeFile(t, filepath.Join(clone, ".gitignore"), "")                       // the rules on disk no longer ignore it
	asks(t, clone, map[string]string{"secret.json": "HEAD", "other.json": ""}) // HEAD readable
	if err := os.Rename(src, src+".moved"); err != nil {
		t.Fatal(err)
	}
	t.Run("shared clone, source moved", func(t *testing.T) { asks(t, clone, unreadable) })

	other := strings.Repeat("ab", 20) // no object of the repository
	t.Run("detached", func(t *testing.T) {
		dir := realPath(t, t.TempDir())
		runGit(t, dir, "init", "-q", ".")
		writeFile(t, filepath.Join(dir, ".git", "HEAD"), other+"\n")
		asks(t, dir, unreadable)
	})
	t.Run("branch", func(t *testing.T) {
		dir := realPath(t, t.TempDir())
		runGit(t, dir, "init", "-q", ".")
		writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
		writeFile(t, filepath.Join(dir, ".git", "refs", "heads", "main"), head+"\n")
		asks(t, dir, unreadable)
	})
	t.Run("unborn", func(t *testing.T) {
		dir := realPath(t, t.TempDir())
		runGit(t, dir, "init", "-q", ".")
		writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
		asks(t, dir, map[string]string{"secret.json": "", "other.json": ""})
	})
}

func mktree(t *testing.T, dir, entries string) string {
	t.Helper()
	out, err := gitOut(dir, []byte(entries), "mktree")
	if err != nil {
		t.Fatalf("git mktree: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

// TestIgnoredBeforeOtherWorktrees: a worktree added at a commit that
// un-ignores a file counts the rules the main work tree's HEAD has, and
// the rule sets the main one kept (attack20-ignore F2).
func TestIgnoredBeforeOtherWorktrees(t *testing.T) {
	dir, first := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	runGit(t, dir, "commit", "-q", "-am", "un-ignore")
	second := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, dir, "worktree", "add", "-q", "--detach", wt, second)
	runGit(t, dir, "checkout", "-q", first) // the main work tree is back where secret/ is ignored
	s, err := Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Ignores().IgnoredBefore("secret/a.json"); got != first[:10] {
		t.Errorf("main work tree's HEAD: IgnoredBefore = %q, want %q", got, first[:10])
	}
	s.Close()

	// the main one moves on, keeping the first commit's rules on the
	// repository's ref: the worktree counts them
	runGit(t, dir, "checkout", "-q", second)
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	s.Ignores().IgnoredBefore("x.json")
	s.Close()
	if s, err = Open(wt); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("secret/a.json"); got != first[:10] {
		t.Errorf("kept rules: IgnoredBefore = %q, want %q", got, first[:10])
	}
}

// TestIgnoredBeforeCaseOfTracked: under core.ignorecase a tracked PROD.ENV
// does not make prod.env, which an earlier HEAD ignored, count as tracked
// (attack20-ignore F5).
func TestIgnoredBeforeCaseOfTracked(t *testing.T) {
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", ".")
	writeFile(t, filepath.Join(dir, ".gitignore"), "prod.env\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "ignore")
	first := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	noteHead(t, dir)
	runGit(t, dir, "config", "core.ignorecase", "true")
	writeFile(t, filepath.Join(dir, ".gitignore"), "")
	writeFile(t, filepath.Join(dir, "PROD.ENV"), "public\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "un-ignore, and a tracked PROD.ENV")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("prod.env"); got != first[:10] {
		t.Errorf("IgnoredBefore(prod.env) = %q, want %q", got, first[:10])
	}
	if got := s.Ignores().IgnoredBefore("PROD.ENV"); got != "" {
		t.Errorf("IgnoredBefore(PROD.ENV), tracked = %q, want \"\"", got)
	}
}

// TestIgnoredBeforeHugeRules: a .gitignore over keptRuleMax is not read
// again for every command (attack20-ignore F6), nor dropped (what it alone
// ignored would become shareable: attack20-ignore-verify N3): below it,
// every untracked file counts as ignored by its set.
func TestIgnoredBeforeHugeRules(t *testing.T) {
	dir, _ := ignoredBeforeRepo(t)
	big := "prod.env\n" + strings.Repeat("# filler line of a hostile .gitignore\n", keptRuleMax/38+1)
	writeFile(t, filepath.Join(dir, "sub", ".gitignore"), big)
	runGit(t, dir, "commit", "-q", "-am", "big")
	bigCommit := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	noteHead(t, dir)
	writeFile(t, filepath.Join(dir, "sub", ".gitignore"), "*.key\n")
	runGit(t, dir, "commit", "-q", "-am", "revert")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig := s.Ignores()
	got := ig.IgnoredBefore("sub/prod.env")
	if !strings.HasPrefix(got, bigCommit[:10]+", whose sub/.gitignore of over 1 MB is not read again") {
		t.Errorf("IgnoredBefore(sub/prod.env) = %q, want the large .gitignore named", got)
	}
	if got := ig.IgnoredBefore("x.json"); got != "" {
		t.Errorf("IgnoredBefore(x.json), outside its folder = %q, want \"\"", got)
	}
}

// TestIgnoredBeforeSeenByAnotherWorktree: the main work tree saw the
// ignoring commit, then pulled the un-ignoring one with plain git (strata
// did not run); a worktree added then counts what the main one saw
// (attack20-ignore-verify N4).
func TestIgnoredBeforeSeenByAnotherWorktree(t *testing.T) {
	dir, first := ignoredBeforeRepo(t) // strata saw first in the main work tree
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	runGit(t, dir, "commit", "-q", "-am", "un-ignore") // plain git: no strata run
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, dir, "worktree", "add", "-q", "--detach", wt, "HEAD")
	s, err := Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("secret/a.json"); got != first[:10] {
		t.Errorf("IgnoredBefore = %q, want %q (the main work tree's last seen HEAD)", got, first[:10])
	}
}

// TestIgnoredBeforeOtherWorktreeLinkHead: the main work tree's HEAD is a
// symbolic link to its branch's file (core.preferSymlinkRefs) and names
// the commit that ignores secret/; strata never ran there. A worktree added
// at an older commit, before any .gitignore, counts that HEAD's rules: read
// as a file, the link was skipped and secret/a.json was shareable there.
func TestIgnoredBeforeOtherWorktreeLinkHead(t *testing.T) {
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", "-b", "main", ".")
	commitFile(t, dir, "README", "x\n", "start")
	start := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	commitFile(t, dir, ".gitignore", "secret/\n", "ignore")
	ignoring := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	runGit(t, dir, "config", "core.preferSymlinkRefs", "true")
	runGit(t, dir, "symbolic-ref", "HEAD", "refs/heads/main")
	if fi, err := os.Lstat(filepath.Join(dir, ".git", "HEAD")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Skipf("git did not write HEAD as a symbolic link (%v)", err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, dir, "worktree", "add", "-q", "--detach", wt, start)
	s, err := Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("secret/a.json"); got != ignoring[:10] {
		t.Errorf("IgnoredBefore = %q, want %q (the main work tree's HEAD, a link)", got, ignoring[:10])
	}
}

// noteHead has strata see dir's HEAD, as any command that asks about a
// kept file does.
func noteHead(t *testing.T, dir string) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Ignores().NoteHead()
	s.Close()
}

// TestIgnoredBeforeFreshClone: where strata has seen no HEAD (a fresh
// clone: its reflog holds the clone alone), the rule changes among HEAD's
// recent first parents count (attack20-ignore F4, attack20-headline H9):
// a clone made after a pushed un-ignore keeps private what the commit
// before it ignored.
func TestIgnoredBeforeFreshClone(t *testing.T) {
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", ".")
	commitFile(t, src, ".gitignore", "prod.env\n", "ignore")
	first := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(src, ".gitignore"), "")
	runGit(t, src, "commit", "-q", "-am", "un-ignore")
	for i := 0; i < 5; i++ {
		writeFile(t, filepath.Join(src, "README"), strings.Repeat("x", i+1)+"\n")
		runGit(t, src, "add", "-A")
		runGit(t, src, "commit", "-q", "-m", "more")
	}
	if got := askClone(t, src, "prod.env"); got != first[:10] {
		t.Errorf("IgnoredBefore(prod.env) in a fresh clone = %q, want %q", got, first[:10])
	}
}

// TestIgnoredBeforeFreshCloneMerge: the ignoring commits can sit behind a
// merge's second parent only (a branch from before the ignore line,
// merged with `-s ours`, main fast-forwarded to it): the walk takes every
// parent (attack20-last F7).
func TestIgnoredBeforeFreshCloneMerge(t *testing.T) {
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	writeFile(t, filepath.Join(src, "README"), "x\n")
	runGit(t, src, "add", "-A")
	runGit(t, src, "commit", "-q", "-m", "start")
	runGit(t, src, "branch", "side")
	commitFile(t, src, ".gitignore", "prod.env\n", "ignore")
	ignoring := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	runGit(t, src, "checkout", "-q", "side")
	writeFile(t, filepath.Join(src, "side.txt"), "y\n")
	runGit(t, src, "add", "-A")
	runGit(t, src, "commit", "-q", "-m", "side")
	runGit(t, src, "merge", "-q", "-s", "ours", "-m", "merge main, keeping ours", "main")
	runGit(t, src, "checkout", "-q", "main")
	runGit(t, src, "merge", "-q", "--ff-only", "side")
	if got := askClone(t, src, "prod.env"); got != ignoring[:10] {
		t.Errorf("IgnoredBefore(prod.env) = %q, want %q (behind the merge's second parent)", got, ignoring[:10])
	}
}

// TestIgnoredBeforePartialClone: in a partial clone an earlier .gitignore
// is fetched when read; when git cannot fetch it, what it ignored is not
// known and every untracked file below it stays private (attack20-last F9:
// it was read as no file, and the file was published).
func TestIgnoredBeforePartialClone(t *testing.T) {
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	runGit(t, src, "config", "uploadpack.allowFilter", "true")
	commitFile(t, src, ".gitignore", "prod.env\n", "ignore")
	first := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(src, ".gitignore"), "*.log\n")
	runGit(t, src, "commit", "-q", "-am", "un-ignore")
	dir := filepath.Join(realPath(t, t.TempDir()), "clone")
	runGit(t, src, "clone", "-q", "--filter=blob:none", "file://"+src, dir)

	// fetched on demand while the remote is there
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Ignores().IgnoredBefore("prod.env"); got != first[:10] {
		t.Errorf("IgnoredBefore(prod.env), remote reachable = %q, want %q", got, first[:10])
	}
	s.Close()

	// and private when it cannot be fetched
	dir2 := filepath.Join(filepath.Dir(dir), "clone2")
	runGit(t, src, "clone", "-q", "--filter=blob:none", "file://"+src, dir2)
	if err := os.RemoveAll(filepath.Join(src, ".git")); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir2); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("prod.env"); !strings.HasPrefix(got, first[:10]+", whose .gitignore could not be read") {
		t.Errorf("IgnoredBefore(prod.env), remote gone = %q, want the unreadable .gitignore named", got)
	}
}

// TestIgnoredBeforeFreshCloneWide: a history of many merged branches puts
// many commits between HEAD and the un-ignoring one, which is still few
// first parents back: the first parents are walked first, whatever the
// commits read in all (attack20-close F10: past 300 commits read, the file
// was published).
func TestIgnoredBeforeFreshCloneWide(t *testing.T) {
	defer func(n int) { historyScanAll = n }(historyScanAll)
	historyScanAll = 20 // fewer than the branches' commits
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	commitFile(t, src, ".gitignore", "prod.env\n", "ignore")
	first := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(src, ".gitignore"), "")
	runGit(t, src, "commit", "-q", "-am", "un-ignore")
	for b := 0; b < 10; b++ {
		runGit(t, src, "checkout", "-q", "-b", fmt.Sprintf("pr%d", b))
		for c := 0; c < 3; c++ {
			writeFile(t, filepath.Join(src, fmt.Sprintf("f%d-%d", b, c)), "x\n")
			runGit(t, src, "add", "-A")
			runGit(t, src, "commit", "-q", "-m", "work")
		}
		runGit(t, src, "checkout", "-q", "main")
		runGit(t, src, "merge", "-q", "--no-ff", "-m", "merge", fmt.Sprintf("pr%d", b))
	}
	if got := askClone(t, src, "prod.env"); got != first[:10] {
		t.Errorf("IgnoredBefore(prod.env) = %q, want %q (11 first parents back, 41 commits)", got, first[:10])
	}
}

// commitFile writes text at name in the work tree dir and commits it.
func commitFile(t *testing.T, dir, name, text, msg string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), text)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", msg)
}

// askClone clones src afresh and asks IgnoredBefore about path there, the
// first strata run in the clone.
func askClone(t *testing.T, src, path string) string {
	t.Helper()
	dir := filepath.Join(realPath(t, t.TempDir()), "clone")
	runGit(t, src, "clone", "-q", src, dir)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Ignores().IgnoredBefore(path)
}

// TestIgnoredBeforeManySets (attack20-f10 P1): a fresh clone of a history
// whose every commit changes nested .gitignore files keeps a rule set per
// commit. They go to the disk as one small pack (a tree of only the rule
// files per commit, each stored as the difference from another), not as a
// loose tree each; and the next run answers from the look-ups the first
// noted (gitrules-memo), reading a handful of trees, not every set's.
func TestIgnoredBeforeManySets(t *testing.T) {
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	var in strings.Builder
	mark := 0
	commit := func(msg string, files map[string]string) {
		mark++
		fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\ncommitter x <x@y> %d +0000\ndata %d\n%s\n", mark, 1700000000+mark, len(msg), msg)
		if mark > 1 {
			fmt.Fprintf(&in, "from :%d\n", mark-1)
		}
		for name, text := range files {
			fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", name, len(text), text)
		}
	}
	files := map[string]string{".gitignore": "prod.env\n"}
	for d := 0; d < 40; d++ {
		files[fmt.Sprintf("d%02d/.gitignore", d)] = "x\n"
	}
	commit("first", files)
	for c := 0; c < 100; c++ { // two folders far apart in each
		commit("edit", map[string]string{
			fmt.Sprintf("d%02d/.gitignore", c%20):      fmt.Sprintf("x%d\n", c),
			fmt.Sprintf("d%02d/.gitignore", 20+c*7%20): fmt.Sprintf("y%d\n", c),
		})
	}
	commit("un-ignore", map[string]string{".gitignore": "\n"})
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin, cmd.Env = src, strings.NewReader(in.String()), gitEnv(t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	head := strings.TrimSpace(runGit(t, src, "rev-parse", "main"))[:10]
	dir := filepath.Join(realPath(t, t.TempDir()), "clone")
	runGit(t, src, "clone", "-q", src, dir)
	loose := func() int {
		n := 0
		for _, d := range must(filepath.Glob(filepath.Join(dir, ".git", "objects", "??"))) {
			n += len(must(os.ReadDir(d)))
		}
		return n
	}
	packs := func() map[string]int64 {
		out := map[string]int64{}
		for _, p := range must(filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))) {
			out[p] = must(os.Stat(p)).Size()
		}
		return out
	}
	looseBefore, packsBefore := loose(), packs()

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ig := s.Ignores()
	if got := ig.IgnoredBefore("prod.env"); len(got) != 10 || got == head {
		t.Fatalf("IgnoredBefore(prod.env) = %q, want an earlier commit", got)
	}
	ig.IgnoredBefore("d07/x")
	ig.IgnoredBefore("d07/y")
	ig.FilteredBefore("prod.env")
	s.Close()
	if n := len(strings.Split(strings.TrimSpace(runGit(t, dir, "ls-tree", "refs/strata/gitrules")), "\n")); n < 100 {
		t.Fatalf("refs/strata/gitrules keeps %d sets, want one per commit", n)
	}
	if n := loose(); n != looseBefore {
		t.Errorf("keeping the rule sets wrote %d loose objects, want none (one pack)", n-looseBefore)
	}
	for p, size := range packs() {
		if _, ok := packsBefore[p]; !ok && size > 40<<10 {
			t.Errorf("the rule sets' pack holds %d bytes, want under 40 KB (each tree the difference from another)", size)
		}
	}
	fsck(t, dir)

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ig = s.Ignores()
	if got := ig.IgnoredBefore("prod.env"); len(got) != 10 {
		t.Errorf("next run: IgnoredBefore(prod.env) = %q, want a commit", got)
	}
	if got := ig.IgnoredBefore("d07/x"); len(got) != 10 {
		t.Errorf("next run: IgnoredBefore(d07/x) = %q, want a commit", got)
	}
	if got := ig.IgnoredBefore("d07/y"); got != "" {
		t.Errorf("next run: IgnoredBefore(d07/y) = %q, want none (no set ignores it)", got)
	}
	if at, d := ig.FilteredBefore("prod.env"); at != "" {
		t.Errorf("FilteredBefore(prod.env) = %q, %q, want none", at, d)
	}
	if s.treeReads > 10 {
		t.Errorf("the next run read %d trees, want a handful (the look-ups noted in gitrules-memo)", s.treeReads)
	}
	// files in folders no command asked about yet are answered from the
	// kept sets' index, not by looking each set's tree up (attack21-p1
	// P1-1: kept files in 200 folders took 21-24 s a status)
	reads := s.treeReads
	for d := 0; d < 40; d++ {
		if got := ig.IgnoredBefore(fmt.Sprintf("d%02d/x", d)); len(got) != 10 {
			t.Errorf("IgnoredBefore(d%02d/x) = %q, want a commit", d, got)
		}
	}
	if n := s.treeReads - reads; n > 40*3 {
		t.Errorf("40 new folders read %d trees, want a few each (HEAD's), not one per set", n)
	}
	// the files of one folder go through its sets' different chains,
	// found once, not through every set again
	chains := ig.setChains
	for i := 0; i < 50; i++ {
		ig.IgnoredBefore(fmt.Sprintf("d07/f%d", i))
		ig.FilteredBefore(fmt.Sprintf("d07/f%d", i))
	}
	if n := ig.setChains - chains; n > 2*len(ig.sets) {
		t.Errorf("50 files of one folder found %d chains of %d sets, want each set's once", n, len(ig.sets))
	}

	// a commit that changes a .gitignore keeps one more set: the index is
	// extended with it, not built again from every set's tree
	// (attack21-verify V-1: 4.5-7.4 s on 2 503 sets)
	commitFile(t, dir, "d03/.gitignore", "z\n", "edit d03")
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ig2 := s2.Ignores()
	if got := ig2.IgnoredBefore("d03/x"); len(got) != 10 {
		t.Errorf("after one more set: IgnoredBefore(d03/x) = %q, want a commit", got)
	}
	if n := len(strings.Split(strings.TrimSpace(runGit(t, dir, "ls-tree", "refs/strata/gitrules")), "\n")); n != len(ig.kept.names)+1 {
		t.Errorf("refs/strata/gitrules keeps %d sets, want one more than %d", n, len(ig.kept.names))
	}
	// the earlier HEAD's 42 trees are read to keep its rule files; every
	// set's again (over 300) only to build the index anew
	if s2.treeReads > 120 {
		t.Errorf("one more set read %d trees, want about 90 (the index extended)", s2.treeReads)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestIgnoredBeforeUnshallow (attack21-p1 P1-3): a shallow clone made after
// the un-ignoring commit cannot know the rules before it; once deepened
// (git fetch --unshallow) its history is read again, as where strata never
// ran, and the file ignored before is private.
func TestIgnoredBeforeUnshallow(t *testing.T) {
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	commitFile(t, src, ".gitignore", "prod.env\n", "ignore")
	first := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	commitFile(t, src, ".gitignore", "\n", "un-ignore")
	commitFile(t, src, "README", "x\n", "more")
	dir := filepath.Join(realPath(t, t.TempDir()), "clone")
	runGit(t, src, "clone", "-q", "--depth", "1", "file://"+src, dir)
	ask := func() string {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return s.Ignores().IgnoredBefore("prod.env")
	}
	if got := ask(); got != "" {
		t.Fatalf("shallow: IgnoredBefore(prod.env) = %q, want none (its history is not here)", got)
	}
	runGit(t, dir, "fetch", "-q", "--unshallow")
	if got := ask(); got != first[:10] {
		t.Errorf("after --unshallow: IgnoredBefore(prod.env) = %q, want %q", got, first[:10])
	}
}

// TestIgnoredBeforeFirstRunAfterCheckout (attack21-inc I-3): a clone whose
// first strata run comes after a checkout of an older commit reads the
// history of the commit it was cloned at too (in HEAD's reflog), as a
// first run right after the clone would have.
func TestIgnoredBeforeFirstRunAfterCheckout(t *testing.T) {
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	commitFile(t, src, "README", "x\n", "start")
	start := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	commitFile(t, src, ".gitignore", "prod.env\n", "ignore")
	ignoring := strings.TrimSpace(runGit(t, src, "rev-parse", "HEAD"))
	commitFile(t, src, ".gitignore", "\n", "un-ignore")
	commitFile(t, src, "README", "y\n", "more")
	dir := filepath.Join(realPath(t, t.TempDir()), "clone")
	runGit(t, src, "clone", "-q", src, dir)
	runGit(t, dir, "checkout", "-q", start)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("prod.env"); got != ignoring[:10] {
		t.Errorf("IgnoredBefore(prod.env) = %q, want %q", got, ignoring[:10])
	}
}

// TestIgnoredBeforeHeadHistoryFirst (attack21-reflog R-1): the reflog's
// other HEADs are walked besides HEAD's history, not in its stead: HEAD's
// history keeps the whole bound (five branches in the reflog took it from
// 3 000 commits to 500).
func TestIgnoredBeforeHeadHistoryFirst(t *testing.T) {
	defer func(n, all int) { historyScan, historyScanAll = n, all }(historyScan, historyScanAll)
	historyScan, historyScanAll = 3, 30
	src := realPath(t, t.TempDir())
	runGit(t, src, "init", "-q", "-b", "main", ".")
	commitFile(t, src, "README", "x\n", "start")
	for b := 0; b < 3; b++ {
		runGit(t, src, "checkout", "-q", "-b", fmt.Sprintf("b%d", b), "main")
		for c := 0; c < 12; c++ {
			commitFile(t, src, fmt.Sprintf("f%d", c), "x\n", "work")
		}
	}
	runGit(t, src, "checkout", "-q", "main")
	for c := 0; c < 25; c++ { // commit c ignores m<c>.env alone
		commitFile(t, src, ".gitignore", fmt.Sprintf("m%d.env\n", c), "rule")
	}
	ignoring := strings.TrimSpace(runGit(t, src, "rev-parse", "main~15"))
	dir := filepath.Join(realPath(t, t.TempDir()), "clone")
	runGit(t, src, "clone", "-q", src, dir)
	for b := 0; b < 3; b++ {
		runGit(t, dir, "checkout", "-q", fmt.Sprintf("origin/b%d", b))
	}
	runGit(t, dir, "checkout", "-q", "main")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("m9.env"); got != ignoring[:10] {
		t.Errorf("IgnoredBefore(m9.env), 15 commits back = %q, want %q", got, ignoring[:10])
	}
}
