package hooks

import (
	"os"
	"regexp"
	"testing"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/validate"
)

// TestPreCommitHooksYAML checks the repository's .pre-commit-hooks.yaml: the
// fields the pre-commit framework needs, and a files: pattern that selects
// exactly the paths strata keeps by default.
func TestPreCommitHooksYAML(t *testing.T) {
	data, err := os.ReadFile("../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, ps := validate.DecodeYAML(".pre-commit-hooks.yaml", data)
	if ps.Invalid() {
		t.Fatal(ps)
	}
	list, _ := doc.([]any)
	if len(list) != 2 {
		t.Fatalf("want two hooks, got %v", doc)
	}
	// the check strata's own hook runs, first: every staged kept file and
	// every deletion, judged against the commit's parents (attack34b F2:
	// strata-validate alone let a deleted or changed Phase Outcome through)
	pc, _ := list[0].(map[string]any)
	for k, want := range map[string]any{"id": FrameworkHookID, "entry": "strata hooks run pre-commit --framework", "language": "golang", "pass_filenames": false, "always_run": true} {
		if pc[k] != want {
			t.Errorf("%s: %s: %v, want %v", FrameworkHookID, k, pc[k], want)
		}
	}
	if _, ok := pc["files"]; ok {
		t.Errorf("%s: a files: pattern would skip commits that only delete", FrameworkHookID)
	}
	h, _ := list[1].(map[string]any)
	for k, want := range map[string]any{"id": "strata-validate", "entry": "strata validate --skip-unkept", "language": "golang", "pass_filenames": true} {
		if h[k] != want {
			t.Errorf("%s: %v, want %v", k, h[k], want)
		}
	}
	files, _ := h["files"].(string)
	re, err := regexp.Compile(files)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".claude/workflow-state.json", ".claude/settings.json", ".claude/initiative.json",
		"PhaseOutputs/s1/phase-01-query.json", "PhaseOutcomes/auth/001-plan.yaml",
		"PhaseOutcomes/auth/002-resolution-D-001.yaml", ".claude/memory/MEMORY.md", ".claude/memory.jsonl",
		".claude/sub/x.json", "PhaseOutputs/s1/notes.json", "PhaseOutputs/phase-01-query.json",
		"PhaseOutcomes/auth/deep/001-plan.yaml", "src/.claude/workflow-state.json", "README.md", "x.json",
	} {
		_, kept := cfg.Classify(p)
		if re.MatchString(p) != kept {
			t.Errorf("%s: files: matches %v, strata keeps it: %v", p, re.MatchString(p), kept)
		}
	}
	// the other L2 candidates match too (strata keeps the first that exists)
	for _, p := range config.MemoryCandidates {
		if !re.MatchString(p) {
			t.Errorf("%s: not matched", p)
		}
	}
}
