package engine

import (
	"os/exec"
	"testing"
)

// HistoryHeads changes when any ref the history is read from moves: the
// state ref (a record), the rejected ref (a rejected version), the home
// ref (asked with home); and not otherwise. Asked without home, the home
// ref moving changes nothing: a page without its events is the same.
func TestHistoryHeads(t *testing.T) {
	e := newRepo(t)
	heads := func() string {
		t.Helper()
		h, err := e.HistoryHeads(true)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	seen := map[string]string{}
	moved := func(what string) {
		t.Helper()
		h := heads()
		if h != heads() {
			t.Fatalf("after %s: two answers differ with nothing recorded between them", what)
		}
		if before, ok := seen[h]; ok {
			t.Fatalf("after %s: the same answer as after %s:\n%s", what, before, h)
		}
		seen[h] = what
	}
	moved("nothing recorded")
	const ws = ".claude/workflow-state.json"
	edit(t, e, ws, `{"type": "DEBUG", "phase": "fix", "lastUpdated": "2026-11-22T10:00:00Z"}`)
	record(t, e, ws)
	moved("a record")
	edit(t, e, ws, `{"type": "NOPE", "phase": "fix", "lastUpdated": "2026-11-22T10:30:00Z"}`)
	if outs := record(t, e, ws); len(outs) != 1 || outs[0].Rejected == nil {
		t.Fatalf("record of an invalid version = %+v, want it rejected", outs)
	}
	moved("a rejected version")
	h, err := e.HomeView()
	if err != nil {
		t.Skipf("no home view here: %v", err)
	}
	without, err := e.HistoryHeads(false)
	if err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "-C", e.Config().Root, "update-ref", h.store.StateRef(), mustHead(t, e))
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git update-ref: %v: %s", err, out)
	}
	moved("the home ref made")
	if h, err := e.HistoryHeads(false); err != nil || h != without {
		t.Fatalf("without home, after the home ref was made: %q, %v; want %q", h, err, without)
	}
}
