package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// A classification is remembered for one run (until Forget) only when it
// was judged from what the engine itself remembers for that run: a path at
// the top or in a folder that resolves where it is named. A path in a
// folder that does not exist yet is remembered while it still does not: a
// link made there since is followed at the next use. A path through a link
// to another folder is judged afresh each time; and after Forget (a
// watcher's next batch) every path is judged again, with git's rules read
// again (.gitignore edited).
func TestClassifyMemo(t *testing.T) {
	e := newRepo(t)
	root := e.Config().Root
	edit(t, e, ".gitignore", "ign/\n")
	if err := os.MkdirAll(filepath.Join(root, "ign"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.Forget() // the .gitignore line read
	edit(t, e, ".claude/a.json", "{}\n")
	edit(t, e, "secret/phase-2.json", "{}\n")
	edit(t, e, "PhaseOutputs/s1/phase-1.json", "{}\n")
	if err := os.Symlink("../secret", filepath.Join(root, "PhaseOutputs/s2")); err != nil {
		t.Fatal(err)
	}
	remembered := func(rel string) bool {
		e.realMu.Lock()
		defer e.realMu.Unlock()
		_, ok := e.classified[rel]
		return ok
	}
	for _, c := range []struct {
		rel  string
		kept bool
		memo bool
	}{
		{".claude/a.json", true, true}, // a plain folder
		{"PhaseOutputs/s1/phase-1.json", true, true},
		{"PhaseOutputs/s2/phase-2.json", true, false}, // through a link to another folder
		{"PhaseOutputs/s3/phase-3.json", true, true},  // a folder not made yet, while it is not
		{"PhaseOutcomes/f1/001-x.yaml", true, true},   // nor its parent
		{"README.md", false, true},                    // the top, no rule
	} {
		for i := 0; i < 2; i++ {
			if _, ok := e.Config().Classify(c.rel); ok != c.kept {
				t.Errorf("%s (%d): kept %v, want %v", c.rel, i, ok, c.kept)
			}
		}
		if got := remembered(c.rel); got != c.memo {
			t.Errorf("%s: remembered %v, want %v", c.rel, got, c.memo)
		}
	}
	// the missing folder made a link to a folder git ignores: the next use
	// judges the path where it leads
	if err := os.Symlink("../ign", filepath.Join(root, "PhaseOutputs/s3")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "PhaseOutcomes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../ign", filepath.Join(root, "PhaseOutcomes/f1")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"PhaseOutputs/s3/phase-3.json", "PhaseOutcomes/f1/001-x.yaml"} {
		if _, ok := e.Config().Classify(rel); ok {
			t.Errorf("%s kept through a link to ign/ made after its first use", rel)
		}
	}
	edit(t, e, ".gitignore", "ign/\n.claude/a.json\n")
	if _, ok := e.Config().Classify(".claude/a.json"); !ok {
		t.Error(".claude/a.json private before Forget: the run's rules are the ones read at its start")
	}
	e.Forget()
	if remembered(".claude/a.json") {
		t.Error("remembered after Forget")
	}
	if _, ok := e.Config().Classify(".claude/a.json"); ok {
		t.Error(".claude/a.json kept after Forget, though .gitignore now ignores it")
	}
}
