package engine

import (
	"testing"
)

// The losses a sync of the state ref keeps, and those a sync of the home
// ref keeps, are kept apart: each sync's KeepLosses drops the entries whose
// path its own ref has recorded again since, and read the other's paths as
// recorded again (absent from its ref), so a home sync made status forget
// every state loss.
func TestHomeAndStateLossesKeptApart(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, `{"v": 1}`)
	record(t, e, k.Path)
	rev := mustHead(t, e)
	edit(t, e, k.Path, `{"v": 2}`)
	record(t, e, k.Path)
	if err := e.KeepLosses([]Lost{{Path: k.Path, Rev: rev, Winner: mustHead(t, e)}}); err != nil {
		t.Fatal(err)
	}
	h, err := e.HomeView()
	if err != nil {
		t.Skipf("no home view here: %v", err)
	}
	if err := h.KeepLosses([]Lost{{Path: "memory/MEMORY.md", Rev: rev, Winner: rev}}); err != nil {
		t.Fatal(err)
	}
	lost, err := e.Losses()
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0].Path != k.Path {
		t.Errorf("state losses after a home sync = %+v, want %s still named", lost, k.Path)
	}
}
