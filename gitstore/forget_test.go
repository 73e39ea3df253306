package gitstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// blobOf is the id git gives content.
func blobOf(t *testing.T, dir, content string) string {
	t.Helper()
	out, err := gitOut(dir, []byte(content), "hash-object", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// commitWith writes, with git, a commit whose tree is base's with the
// top-level file name holding content, and returns its id.
func commitWith(t *testing.T, dir, base, name, content, msg string, parents ...string) string {
	t.Helper()
	blob, err := gitOut(dir, []byte(content), "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(runGit(t, dir, "ls-tree", base), "\n") {
		if !strings.HasSuffix(l, "\t"+name) {
			lines = append(lines, l)
		}
	}
	lines = append(lines, "100644 blob "+blob+"\t"+name)
	tree, err := gitOut(dir, []byte(strings.Join(lines, "\n")+"\n"), "mktree")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	c, err := gitOut(dir, []byte(msg), args...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reachable lists every object reachable from rev and not from the
// excluded ones.
func reachable(t *testing.T, dir, rev string, not ...string) string {
	args := []string{"rev-list", "--objects", rev}
	for _, n := range not {
		args = append(args, "^"+n)
	}
	return runGit(t, dir, args...)
}

// A merge with the remote's commit, made before the push was refused,
// takes the remote's version; a commit that recorded only the forgotten
// path goes; the published commits stay as they were; and nothing the new
// head reaches beyond the remote's holds the secret.
func TestForgetKeepsPublishedAndTakesTheRemotesVersion(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := mustRecord(t, s, change("x.json", `{"v":1}`, t0), change("y.json", `{"y":1}`, t0))[0].Commit
	l := mustRecord(t, s, change("x.json", `{"v":"SECRET"}`, t0.Add(time.Minute)))[0].Commit
	rm := commitWith(t, r.main, a, "x.json", `{"v":2}`,
		"update x.json\n\nStrata-Path: x.json\nStrata-Action: update\nStrata-Time: 2026-03-01T12:02:00.000000000Z\n", a)
	runGit(t, r.main, "update-ref", TrackingPrefix+"origin/state", rm)
	m := commitWith(t, r.main, l, "x.json", `{"v":"SECRET"}`, "merge origin\n\nkept local x.json: newer\n", l, rm)
	runGit(t, r.main, "update-ref", "refs/strata/state", m)
	markTaken(t, s)
	c := mustRecord(t, s, change("y.json", `{"y":2}`, t0.Add(3*time.Minute)))[0].Commit
	secret := blobOf(t, r.main, `{"v":"SECRET"}`)

	res, err := s.Forget(ctx, []string{"x.json"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Old != c || !slices.Equal(res.Dropped, []string{l}) || !slices.Equal(res.Rewritten, []string{m, c}) {
		t.Fatalf("forget: %+v; want old %s, dropped [%s], rewritten [%s %s]", res, c, l, m, c)
	}
	head := runGit(t, r.main, "rev-parse", "refs/strata/state")
	if head != res.New {
		t.Fatalf("ref at %s, Forget said %s", head, res.New)
	}
	if objs := reachable(t, r.main, head); strings.Contains(objs, secret) {
		t.Fatalf("the secret %s is still reachable from the state ref", secret)
	}
	for _, anc := range []string{a, rm} { // published: kept, and still in the history
		if _, err := gitOut(r.main, nil, "merge-base", "--is-ancestor", anc, head); err != nil {
			t.Fatalf("published commit %s is no longer in the history", anc)
		}
	}
	if got := runGit(t, r.main, "show", head+":x.json"); got != `{"v":2}` {
		t.Fatalf("x.json at the new head = %s, want the remote's version", got)
	}
	if got := runGit(t, r.main, "show", head+":y.json"); got != `{"y":2}` {
		t.Fatalf("y.json at the new head = %s, want the last recorded", got)
	}
	// the only unpublished commit that names x.json is the merge, which
	// took the remote's version over its first parent's (the base's):
	// its trailers say so, as sync's do
	if got := runGit(t, r.main, "log", "--no-merges", "--format=%B", head, "^"+rm); strings.Contains(got, "Strata-Path: x.json") {
		t.Fatalf("an unpublished commit still names x.json:\n%s", got)
	}
	if got := runGit(t, r.main, "log", "-1", "--format=%B", head+"^"); !strings.Contains(got, "kept local x.json: newer\n\nStrata-Path: x.json\nStrata-Action: update\nStrata-Class: \nStrata-Source: sync\n") {
		t.Fatalf("the rewritten merge's message:\n%s\nwant a sync block for x.json", got)
	}
	if got, want := runGit(t, r.main, "log", "-1", "--format=%an %ae %ct", head), runGit(t, r.main, "log", "-1", "--format=%an %ae %ct", c); got != want {
		t.Fatalf("the rewritten commit's identity and time %q, want %q", got, want)
	}
	fsck(t, r.main)

	// Again: nothing left to forget.
	if _, err := s.Forget(ctx, []string{"x.json"}, false); !errors.Is(err, state.ErrUnchanged) {
		t.Fatalf("second forget: %v, want ErrUnchanged", err)
	}
}

// With no remote every commit is unpublished: a commit of several files
// loses the forgotten path's lines (one left: a one-file commit's message),
// one of the forgotten path alone goes, and the others keep their content.
func TestForgetRewritesMessages(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mustRecord(t, s, change("x.json", `{"v":"SECRET"}`, t0), change("y.json", `{"y":1}`, t0))
	mustRecord(t, s, change("x.json", `{"v":"SECRET2"}`, t0.Add(time.Minute)))
	mustRecord(t, s, change("y.json", `{"y":2}`, t0.Add(2*time.Minute)))
	before := runGit(t, r.main, "rev-parse", "refs/strata/state")
	objects := runGit(t, r.main, "count-objects", "-v")

	dry, err := s.Forget(ctx, []string{"x.json"}, true)
	if err != nil || len(dry.Dropped) != 1 || len(dry.Rewritten) != 2 || dry.New != "" {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if runGit(t, r.main, "rev-parse", "refs/strata/state") != before || runGit(t, r.main, "count-objects", "-v") != objects {
		t.Fatal("a dry run wrote")
	}

	if _, err := s.Forget(ctx, []string{"x.json"}, false); err != nil {
		t.Fatal(err)
	}
	log := runGit(t, r.main, "log", "--format=%B%x00", "refs/strata/state")
	msgs := strings.Split(strings.TrimSuffix(log, "\x00"), "\x00\n")
	if len(msgs) != 2 {
		t.Fatalf("%d commits, want 2:\n%s", len(msgs), log)
	}
	root := msgs[1]
	if !strings.HasPrefix(root, "add y.json\n\nStrata-Path: y.json\n") || strings.Contains(root, "x.json") ||
		!strings.Contains(root, "Strata-Time: 2026-03-01T12:00:00.000000000Z") {
		t.Fatalf("root commit's message:\n%s", root)
	}
	if strings.Contains(reachable(t, r.main, "refs/strata/state"), blobOf(t, r.main, `{"v":"SECRET"}`)) {
		t.Fatal("the secret is still reachable")
	}
	if got := runGit(t, r.main, "ls-tree", "--name-only", "refs/strata/state"); got != "y.json" {
		t.Fatalf("head tree: %q", got)
	}
	fsck(t, r.main)
}

// A history of nothing but the forgotten path is not emptied.
func TestForgetLeavesNoEmptyRef(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	mustRecord(t, s, change("x.json", `{"v":"SECRET"}`, t0))
	before := runGit(t, r.main, "rev-parse", "refs/strata/state")
	if _, err := s.Forget(context.Background(), []string{"x.json"}, false); !errors.Is(err, ErrNothingLeft) {
		t.Fatalf("forget: %v, want ErrNothingLeft", err)
	}
	if runGit(t, r.main, "rev-parse", "refs/strata/state") != before {
		t.Fatal("the ref moved")
	}
}

// A forgotten path's whole trailer block goes, its Strata-Head line too;
// the other path's block stays byte for byte.
func TestForgetMessageDropsWholeBlock(t *testing.T) {
	msg := "record 2 files\n\nupdate a.json\nupdate b.json\n\n" +
		"Strata-Path: a.json\nStrata-Action: update\nStrata-Class: claude-json\nStrata-Source: watch\nStrata-Schema: json\nStrata-Head: " + strings.Repeat("1", 40) + "\n" +
		"Strata-Path: b.json\nStrata-Action: update\nStrata-Class: claude-json\nStrata-Source: watch\nStrata-Schema: json\nStrata-Head: " + strings.Repeat("2", 40) + "\n" +
		"Strata-Time: 2026-01-02T03:04:05.000000000Z\n"
	out, named, others := forgetMessage(msg, map[string]bool{"a.json": true})
	if !named || !others {
		t.Fatalf("named=%v others=%v", named, others)
	}
	if strings.Contains(out, "a.json") || strings.Contains(out, strings.Repeat("1", 40)) {
		t.Fatalf("a.json's block left behind:\n%s", out)
	}
	if !strings.Contains(out, "Strata-Path: b.json\nStrata-Action: update\nStrata-Class: claude-json\nStrata-Source: watch\nStrata-Schema: json\nStrata-Head: "+strings.Repeat("2", 40)+"\nStrata-Time: ") {
		t.Fatalf("b.json's block changed:\n%s", out)
	}
}
