package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// importHistory writes commits into the repository at dir with git
// fast-import, in order, and returns their ids by name. A root commit holds
// one file; the others keep their first parent's tree.
func importHistory(tb testing.TB, dir string, commits []fastCommit) map[string]string {
	tb.Helper()
	var b strings.Builder
	mark := map[string]int{}
	for i, c := range commits {
		mark[c.name] = i + 1
		if len(c.parents) == 0 {
			b.WriteString("reset refs/heads/imported\n")
		}
		msg := "commit " + c.name + "\n"
		fmt.Fprintf(&b, "commit refs/heads/imported\nmark :%d\ncommitter %s %d +0000\ndata %d\n%s",
			i+1, identity, t0.Unix()+c.at, len(msg), msg)
		for j, p := range c.parents {
			verb := "merge"
			if j == 0 {
				verb = "from"
			}
			fmt.Fprintf(&b, "%s :%d\n", verb, mark[p])
		}
		if len(c.parents) == 0 {
			content := `{"root":true}`
			fmt.Fprintf(&b, "M 100644 inline .claude/workflow-state.json\ndata %d\n%s\n", len(content), content)
		}
		b.WriteString("\n")
	}
	marks := filepath.Join(tb.TempDir(), "marks")
	if _, err := gitOut(dir, []byte(b.String()), "fast-import", "--quiet", "--export-marks="+marks); err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(marks)
	if err != nil {
		tb.Fatal(err)
	}
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var n int
		var id string
		if _, err := fmt.Sscanf(line, ":%d %s", &n, &id); err != nil {
			tb.Fatalf("marks: %q: %v", line, err)
		}
		ids[commits[n-1].name] = id
	}
	return ids
}

type fastCommit struct {
	name    string
	at      int64
	parents []string
}

// openHistory opens a fresh repository holding commits.
func openHistory(tb testing.TB, commits []fastCommit) (*Store, map[string]string) {
	tb.Helper()
	r := newTestRepo(tb, "plain")
	ids := importHistory(tb, r.main, commits)
	s, err := Open(r.main)
	if err != nil {
		tb.Fatal(err)
	}
	return s, ids
}

// A commit with k parents once made the merge-base walk look at every
// queued entry before each step (k² steps): after a merge of such a commit,
// comparing the head with it (status, doctor) took a minute for 32 000
// parents. The walk takes one step per entry it queues.
func TestWalkWideOctopusIsLinear(t *testing.T) {
	const k = 2000
	commits := []fastCommit{{name: "root", at: 0}, {name: "local", at: 50, parents: []string{"root"}}}
	octopus := fastCommit{name: "octopus", at: 200}
	for i := 0; i < k; i++ {
		c := fastCommit{name: fmt.Sprintf("c%d", i), at: 100, parents: []string{"root"}}
		commits = append(commits, c)
		octopus.parents = append(octopus.parents, c.name)
	}
	commits = append(commits, octopus, fastCommit{name: "merged", at: 300, parents: []string{"local", "octopus"}})
	s, ids := openHistory(t, commits)

	ahead, behind, err := s.Compare(ids["merged"], ids["octopus"])
	if err != nil {
		t.Fatal(err)
	}
	if ahead != 2 || behind != 0 {
		t.Errorf("Compare = %d ahead, %d behind, want 2, 0", ahead, behind)
	}
	if s.walkSteps > 4*k {
		t.Errorf("the walk took %d steps over %d commits, want at most %d", s.walkSteps, len(commits), 4*k)
	}
	steps := s.walkSteps
	m, err := s.PlanMerge(ids["local"], ids["octopus"], t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != MergeMerged || m.Ahead != 1 || m.Behind != k+1 || m.Base != ids["root"] {
		t.Errorf("PlanMerge = %s, %d ahead, %d behind, base %s, want merged, 1, %d, base %s",
			m.Kind, m.Ahead, m.Behind, m.Base, k+1, ids["root"])
	}
	if n := s.walkSteps - steps; n > 4*k {
		t.Errorf("PlanMerge's walk took %d steps, want at most %d", n, 4*k)
	}
}

// ladder is a history of levels of width commits over a root, each commit
// of a level a merge of every commit of the level below, and two tips that
// each merge the top level: every merge of two commits of one level has
// the whole level below as merge bases (a criss-cross, width wide).
func ladder(width, levels int) []fastCommit {
	commits := []fastCommit{{name: "root", at: 0}}
	prev := []string{"root"}
	at := int64(0)
	for l := 0; l < levels; l++ {
		var cur []string
		for j := 0; j < width; j++ {
			at++
			name := fmt.Sprintf("l%d-%d", l, j)
			commits = append(commits, fastCommit{name: name, at: at, parents: prev})
			cur = append(cur, name)
		}
		prev = cur
	}
	return append(commits, fastCommit{name: "tip1", at: at + 1, parents: prev},
		fastCommit{name: "tip2", at: at + 2, parents: prev})
}

// Merging the merge bases of a criss-cross once merged each pair again
// for every merge above it that found them: (width-1)^8 merges of merge
// bases for a ladder history a remote can push (52 commits: 13 minutes).
// Each pair of bases is merged once per merge.
func TestCrissCrossLadderMergesEachPairOnce(t *testing.T) {
	const width, levels = 3, 10
	s, ids := openHistory(t, ladder(width, levels))
	m, err := s.PlanMerge(ids["tip1"], ids["tip2"], t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != MergeMerged || len(m.Paths) != 0 {
		t.Errorf("PlanMerge = %s with %d paths, want merged with none", m.Kind, len(m.Paths))
	}
	// One merge per pair of bases the walk meets at each level, down to
	// the depth the fold stops at (8).
	if want := (width - 1) * 9; s.subMerges > want {
		t.Errorf("%d merges of merge bases, want at most %d", s.subMerges, want)
	}
}

// A history whose merge bases would take more merges of merge bases than a
// merge allows is refused, with ErrTangled, rather than merged slowly.
func TestTangledHistoryIsRefused(t *testing.T) {
	s, ids := openHistory(t, ladder(maxBaseMerges+2, 1))
	_, err := s.PlanMerge(ids["tip1"], ids["tip2"], t0.Add(time.Hour))
	if !errors.Is(err, ErrTangled) {
		t.Fatalf("PlanMerge = %v, want ErrTangled", err)
	}
	if s.subMerges > maxBaseMerges {
		t.Errorf("%d merges of merge bases before refusing, want at most %d", s.subMerges, maxBaseMerges)
	}
}
