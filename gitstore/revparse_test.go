package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// TestResolveLikeGit resolves revisions of every shape strata accepts in
// every repository layout and compares each answer with git rev-parse's,
// before and after a git gc packs the objects.
func TestResolveLikeGit(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		defer s.Close()
		for i := 0; i < 4; i++ {
			mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))
		}
		head := strings.TrimSpace(runGit(t, r.main, "rev-parse", r.ref))
		runGit(t, r.main, "tag", "-a", "-m", "annotated", "ann", head)
		runGit(t, r.main, "tag", "light", r.ref+"~1")
		revs := []string{r.ref, r.ref + "~2", r.ref + "^", r.ref + "^1~1", r.ref + "~1^{commit}",
			head[:7], head[:12] + "~3", head, "ann", "ann~1", "light", "tags/ann^{}", "refs/tags/light^0",
			r.ref + "@{1}", r.ref + "@{2}~1"} // the last two through git (reflog entries)
		if r.commits {
			revs = append(revs, "HEAD", "@", "HEAD^0")
		}
		for _, pass := range []string{"loose", "packed"} {
			for _, rev := range revs {
				want := strings.TrimSpace(runGit(t, r.wt, "rev-parse", "--verify", "-q", rev+"^{commit}"))
				got, err := s.Resolve(rev)
				if err != nil || got != want {
					t.Errorf("%s: Resolve(%q) = %s, %v; git rev-parse: %s", pass, rev, got, err, want)
				}
			}
			for _, bad := range []string{r.ref + "~9", r.ref + "^2", "nosuchref", "ffffffffff", "nosuchref@{1}", r.ref + "@{99}", "HEAD:f.json",
				r.ref + "@{1}:f.json", r.ref + "@{1} " + r.ref, r.ref + "@{1}^!", r.ref + "^!", r.ref + "~1x"} { // git would read the junk as "now": the head
				if _, err := s.Resolve(bad); !errors.Is(err, state.ErrNotFound) {
					t.Errorf("%s: Resolve(%q) = %v, want ErrNotFound", pass, bad, err)
				}
			}
			runGit(t, r.main, "gc", "--quiet", "--prune=now")
		}
		runGit(t, r.main, "tag", "-d", "ann", "light") // the user's refs as they were
	})
}

// FuzzReflogRev: the hand-read reflogRev accepts exactly what the regular
// expression it replaced matched.
func FuzzReflogRev(f *testing.F) {
	re := regexp.MustCompile(`^[^\s:@{}~^]*@\{[^\s:{}]+\}$`)
	for _, s := range []string{"HEAD@{1}", "@{u}", "main@{2.days.ago}", "stash@{0}", "@{}", "@{", "a@{b}c", "a@{b}}", "a@b@{1}",
		"x@{a b}", "x@{a:b}", "x y@{1}", "x~1@{1}", "@{{1}}", "@{1}@{2}", "\f@{1}", "x@{\v}", "é@{ü}", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := reflogRev(s), re.MatchString(s); got != want {
			t.Fatalf("reflogRev(%q) = %v, the expression says %v", s, got, want)
		}
	})
}

// TestResolveMissingCommit: a commit a ref or a parent names that the
// object store lacks is a damaged repository, said whole and not as
// state.ErrNotFound (attack31 F9: `revision "HEAD~1": object ID`, the
// sentence cut, exit 1); a full id given that is not here is no such
// commit, as before.
func TestResolveMissingCommit(t *testing.T) {
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", "-b", "main", ".")
	for _, m := range []string{"one", "two", "three"} {
		runGit(t, dir, "commit", "-q", "--allow-empty", "-m", m)
	}
	parent := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD~1"))
	if err := os.Remove(filepath.Join(dir, ".git", "objects", parent[:2], parent[2:])); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, rev := range []string{"HEAD~1", "HEAD~2", "HEAD^^", "main~1", "refs/heads/main^"} {
		_, err := s.Resolve(rev)
		if err == nil || errors.Is(err, state.ErrNotFound) || err.Error() != "object "+parent+" is missing from the repository (git fsck --full shows the damage: objects pruned, or an object store named in objects/info/alternates gone; fetch them again, or restore .git from a backup)" {
			t.Errorf("Resolve(%s) = %v (not found: %v), want the missing commit named", rev, err, errors.Is(err, state.ErrNotFound))
		}
	}
	for _, rev := range []string{parent, parent + "~1", parent + "^{commit}"} {
		if _, err := s.Resolve(rev); !errors.Is(err, state.ErrNotFound) || !strings.HasPrefix(err.Error(), "no such commit") {
			t.Errorf("Resolve(%s) = %v, want no such commit", rev, err)
		}
	}
}

// A HEAD naming a tree is unreadable as a commit, and said so: the object
// is there, and is a tree (attack31b H: "object ID: not a commit: not
// found").
func TestHeadNamingTreeSaysSo(t *testing.T) {
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", "-b", "main", ".")
	commitFile(t, dir, ".gitignore", "secret/\n", "ignore")
	tree := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD^{tree}"))
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), tree+"\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := s.Ignores().IgnoredBefore("secret/a.json")
	if !strings.Contains(got, "object "+tree+" is a tree, not a commit") || strings.Contains(got, "not found") {
		t.Errorf("IgnoredBefore = %q, want the tree named as not a commit", got)
	}
}
