package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/phase"
)

var tiers = []string{"query", "strategy", "search", "extraction", "reading", "analysis", "validation", "report"}

// stateRepo makes a repository with one commit and 20 kept files staged on
// top of it: workflow-state and initiative changed, 16 phase outputs (two
// sessions of 8 tiers) and 2 Phase Outcomes added; plus a large unrelated
// tree that the check must not walk.
func stateRepo(tb testing.TB) string {
	tb.Helper()
	root := newRepo(tb)
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write(".claude/workflow-state.json", `{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T09:00:00Z"}`)
	write(".claude/initiative.json", `{"name": "auth", "status": "created", "lastUpdated": "2026-11-22T09:00:00Z"}`)
	for i := 0; i < 200; i++ {
		write(fmt.Sprintf("src/pkg%03d/file.go", i), "package p\n")
	}
	git(tb, root, "add", "-A")
	git(tb, root, "commit", "-q", "-m", "initial")

	write(".claude/workflow-state.json", `{"type": "APEX", "phase": "implement", "lastUpdated": "2026-11-22T10:00:00Z"}`)
	write(".claude/initiative.json", `{"name": "auth", "status": "in_progress", "lastUpdated": "2026-11-22T10:00:00Z"}`)
	for _, session := range []string{"2026-11-22_auth", "2026-11-22_billing"} {
		for n := 1; n <= 8; n++ {
			label, _ := phase.TierLabel(n)
			write(fmt.Sprintf("PhaseOutputs/%s/phase-%02d-%s.json", session, n, label), fmt.Sprintf(`{
  "$schema": "phase-output-v2.0.0", "phase": %d, "tier_name": %q, "tier_label": %q,
  "workers_executed": [{"id": "W01", "name": "worker", "status": "completed", "duration_seconds": 12}],
  "started_at": "2026-11-22T09:00:00Z", "completed_at": "2026-11-22T09:00:12Z", "duration_seconds": 12,
  "memory_snapshot": {"query": "q"}, "quality_metrics": {"completeness": 1.0, "accuracy": 0.9, "tier_score": 0.95},
  "status": "completed", "errors": []
}`, n, strings.ToUpper(label[:1])+label[1:], label))
		}
	}
	for i, phase := range []string{"plan", "implement"} {
		write(fmt.Sprintf("PhaseOutcomes/auth/%03d-%s.yaml", i+1, phase), "phase: "+phase+`
feature: auth
produced:
  - artifact: plan
    location: docs/plan.md
findings:
  - type: risk
    title: tokens in plain text
    reasoning: the session table keeps them
    proposed_category: in-scope-blocking
pending_decisions:
  - id: D-00`+fmt.Sprint(i+1)+`
    type: design
    question: rotate?
    options: [rotate, keep]
    recommended: rotate
    blocking: true
`)
	}
	git(tb, root, "add", "-A")
	return root
}

// preCommit runs the check on the index of the repository at root, as the
// hook does: a new engine each time, since one reads the index when opened.
func preCommit(tb testing.TB, root string) (Report, error) {
	tb.Helper()
	eng, err := engine.OpenIndex(root, "", gitstore.Options{})
	if err != nil {
		return Report{}, err
	}
	return PreCommit(eng)
}

func TestPreCommit(t *testing.T) {
	root := stateRepo(t)
	rep, err := preCommit(t, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 20 || rep.Invalid != 0 || rep.Problems.Invalid() {
		t.Fatalf("20 valid staged files: %+v", rep)
	}
	// the work tree does not matter, the index does
	os.WriteFile(filepath.Join(root, ".claude", "workflow-state.json"), []byte("{"), 0o644)
	if rep, _ := preCommit(t, root); rep.Invalid != 0 {
		t.Fatalf("work-tree content was checked: %+v", rep)
	}
	git(t, root, "add", ".claude/workflow-state.json")
	rep, err = preCommit(t, root)
	if err != nil || rep.Invalid != 1 || rep.Problems[0].Path != ".claude/workflow-state.json" {
		t.Fatalf("staged invalid file: %+v %v", rep, err)
	}
	// after the commit, nothing differs from HEAD: nothing to check
	git(t, root, "commit", "-q", "--no-verify", "-m", "x")
	if rep, err := preCommit(t, root); err != nil || rep.Checked != 0 {
		t.Fatalf("clean index: %+v %v", rep, err)
	}
}

func TestPreCommitNoHead(t *testing.T) {
	root := newRepo(t)
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	os.WriteFile(filepath.Join(root, ".claude", "workflow-state.json"), []byte(`{"type":"x"}`), 0o644)
	git(t, root, "add", "-A")
	rep, err := preCommit(t, root)
	if err != nil || rep.Checked != 1 || rep.Invalid != 1 {
		t.Fatalf("first commit: %+v %v", rep, err)
	}
}

// BenchmarkPreCommit20 is the whole check the hook process runs (open the
// repository and its configuration, read the index and HEAD, validate 20
// staged state files). Target: under 50 ms per run.
func BenchmarkPreCommit20(b *testing.B) {
	root := stateRepo(b)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		rep, err := preCommit(b, root)
		if err != nil || rep.Checked != 20 || rep.Invalid != 0 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/check")
}
