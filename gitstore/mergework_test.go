package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	m, err := s.PlanMerge(ids["local"], ids["octopus"])
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
