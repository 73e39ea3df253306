package engine

import (
	"os"
	"slices"
	"testing"
)

// TestDiffering names the kept files that differ from the recorded head,
// and records nothing: the watcher's rescan reads them again once quiet.
func TestDiffering(t *testing.T) {
	e := newRepo(t)
	for _, p := range []string{".claude/same.json", ".claude/edited.json", ".claude/gone.json", ".claude/locked.json"} {
		edit(t, e, p, `{"v": 1}`)
	}
	record(t, e, ".claude/same.json", ".claude/edited.json", ".claude/gone.json", ".claude/locked.json")
	head := mustHead(t, e)
	edit(t, e, ".claude/edited.json", `{"v": 2}`)
	edit(t, e, ".claude/new.json", `{"v": 1}`)
	if err := os.Remove(e.Config().Abs(".claude/gone.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.Config().Abs(".claude/locked.json"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(e.Config().Abs(".claude/locked.json"), 0o644) })
	all, err := e.AllPaths()
	if err != nil {
		t.Fatal(err)
	}
	found, err := e.Differing(all)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range found {
		got = append(got, k.Path)
	}
	want := []string{".claude/edited.json", ".claude/gone.json", ".claude/new.json"}
	if os.Geteuid() != 0 { // root reads a mode-000 file
		want = append(want, ".claude/locked.json")
		slices.Sort(want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Differing = %q, want %q", got, want)
	}
	if h := mustHead(t, e); h != head {
		t.Fatalf("Differing recorded: head %s, was %s", h, head)
	}
}
