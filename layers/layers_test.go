package layers

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/schemas"
	"github.com/strata-dev/strata/state"
)

func TestTransition(t *testing.T) {
	doc := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name      string
		prev, cur map[string]any
		want      []string
	}{
		{"phase change", doc("type", "APEX", "phase", "plan"), doc("type", "APEX", "phase", "implement", "context", "auth"), []string{"Active APEX workflow: plan completed, implementing auth"}},
		{"other phase", doc("type", "DEBUG", "phase", "fix"), doc("type", "DEBUG", "phase", "qa"), []string{"Active DEBUG workflow: fix completed, entering qa"}},
		{"same phase", doc("type", "APEX", "phase", "plan"), doc("type", "APEX", "phase", "plan", "context", "x"), nil},
		{"start", doc(), doc("type", "APEX", "phase", "plan"), nil},
		{"new workflow type", doc("type", "DEBUG", "phase", "fix"), doc("type", "APEX", "phase", "plan"), nil},
		{"cleared", doc("type", "APEX", "phase", "plan"), doc(), nil},
		{"completed", doc("type", "APEX", "phase", "review"), doc("type", "APEX", "phase", "review", "status", "completed", "context", "c", "summary", "shipped"), []string{"Completed APEX for c: shipped"}},
		{"completed default outcome", doc("type", "APEX", "phase", "review"), doc("type", "APEX", "phase", "done", "status", "completed", "context", "c"), []string{"Completed APEX for c: done"}},
		{"still completed", doc("type", "APEX", "status", "completed"), doc("type", "APEX", "status", "completed"), nil},
		// a new workflow of the same type starts: after a completed one, or with another startedAt (attack22-layers L-6)
		{"new after completed", doc("type", "APEX", "phase", "review", "status", "completed", "context", "auth"), doc("type", "APEX", "phase", "plan", "status", "in_progress", "context", "billing"), nil},
		{"new startedAt", doc("type", "APEX", "phase", "review", "startedAt", "2026-11-22T10:00:00Z"), doc("type", "APEX", "phase", "plan", "startedAt", "2026-11-23T10:00:00Z"), nil},
		{"same startedAt", doc("type", "APEX", "phase", "plan", "startedAt", "2026-11-22T10:00:00Z"), doc("type", "APEX", "phase", "implement", "startedAt", "2026-11-22T10:00:00Z"), []string{"Active APEX workflow: plan completed, implementing"}},
		// control and format characters are written as their escapes, as
		// text; white space of any kind is one space (attack23-verify 5)
		{"controls in context", doc("type", "APEX", "phase", "plan"), doc("type", "APEX", "phase", "implement", "context", "auth\n## Notes\u2028x\u0085y \x1b]0;owned\a\x1b[2J \u009b31m \u202egnp \u2066i\u200b\ufeff\x7f café 東京 🎉"),
			[]string{`Active APEX workflow: plan completed, implementing auth ## Notes x y \x1b]0;owned\a\x1b[2J \u009b31m \u202egnp \u2066i\u200b\ufeff\x7f café 東京 🎉`}},
		{"controls in phases", doc("type", "APEX", "phase", "plan\x1b[2J"), doc("type", "APEX", "phase", "exec\u009b2J\t\x1b[5m"), []string{`Active APEX workflow: plan\x1b[2J completed, entering exec\u009b2J \x1b[5m`}},
		{"controls in outcome", doc("type", "APEX", "phase", "review"), doc("type", "APEX", "phase", "review", "status", "completed", "context", "c\u202e", "outcome", "ok\x1b]8;;http://x\a"), []string{`Completed APEX for c\u202e: ok\x1b]8;;http://x\a`}},
		{"blank context and outcome", doc("type", "APEX", "phase", "review"), doc("type", "APEX", "phase", "review", "status", "completed", "context", "\u0085\n", "outcome", " \u2028"), []string{"Completed APEX for (no context): done"}},
		{"blank phase", doc("type", "APEX", "phase", "\n"), doc("type", "APEX", "phase", "plan"), nil},
		// a value is cut at MaxLineValue characters, the line then names
		// the whole state (attack27 F3: a 200 000-character context)
		{"long context", doc("type", "APEX", "phase", "plan"), doc("type", "APEX", "phase", "implement", "context", "doc\n"+strings.Repeat("C", 200000)),
			[]string{"Active APEX workflow: plan completed, implementing doc " + strings.Repeat("C", 196) + "… (cut; the whole state: strata show .claude/workflow-state.json --rev 0123456789)"}},
		{"long phases", doc("type", "APEX", "phase", strings.Repeat("p", 5000)), doc("type", "APEX", "phase", strings.Repeat("q", 5000)),
			[]string{"Active APEX workflow: " + strings.Repeat("p", 200) + "… completed, entering " + strings.Repeat("q", 200) + "… (cut; the whole state: strata show .claude/workflow-state.json --rev 0123456789)"}},
		{"long outcome", doc("type", "APEX", "phase", "review"), doc("type", "APEX", "phase", "review", "status", "completed", "context", "c", "outcome", strings.Repeat("東", 300)),
			[]string{"Completed APEX for c: " + strings.Repeat("東", 200) + "… (cut; the whole state: strata show .claude/workflow-state.json --rev 0123456789)"}},
		{"escape not split", doc("type", "APEX", "phase", "plan"), doc("type", "APEX", "phase", "implement", "context", strings.Repeat("a", 197)+"\x1b[2J"),
			[]string{"Active APEX workflow: plan completed, implementing " + strings.Repeat("a", 197) + "… (cut; the whole state: strata show .claude/workflow-state.json --rev 0123456789)"}},
		{"exactly the limit", doc("type", "APEX", "phase", "plan"), doc("type", "APEX", "phase", "implement", "context", strings.Repeat("a", 200)),
			[]string{"Active APEX workflow: plan completed, implementing " + strings.Repeat("a", 200)}},
	}
	for _, tc := range tests {
		if got := Transition(tc.prev, tc.cur, "0123456789abcdef"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		for _, l := range tc.want {
			if !IsProtocolLine(l) {
				t.Errorf("%s: %q is not matched by the cap", tc.name, l)
			}
		}
	}
}

func TestExpiredLineCut(t *testing.T) {
	doc := map[string]any{"type": "APEX", "phase": "build", "context": "pasted design doc " + strings.Repeat("C", 200000)}
	got := expiredLine(doc, "fedcba9876543210")
	want := "Expired workflow: APEX at build for pasted design doc " + strings.Repeat("C", 182) + "… (cut; the whole state: strata show .claude/workflow-state.json --rev fedcba9876~1)"
	if got != want {
		t.Errorf("got %q (%d), want %q", got, len(got), want)
	}
	if !IsProtocolLine(got) {
		t.Errorf("%q is not matched by the cap", got)
	}
	short := map[string]any{"type": "APEX", "phase": "build", "context": "auth"}
	if got := expiredLine(short, "fedcba9876543210"); got != "Expired workflow: APEX at build for auth" {
		t.Errorf("got %q", got)
	}
}

func TestTier(t *testing.T) {
	for l, want := range map[Layers]string{{true, true, true}: "Full", {true, true, false}: "Standard", {true, false, true}: "Standard", {true, false, false}: "Minimal", {false, true, true}: "none"} {
		if got := l.Tier(); got != want {
			t.Errorf("%+v: %s, want %s", l, got, want)
		}
	}
}

// fakeGraph fails while broken, and remembers what it was given.
type fakeGraph struct {
	broken bool
	got    []Entity
}

func (g *fakeGraph) FromState(c state.Class, doc map[string]any) (Entity, bool) {
	if len(doc) == 0 {
		return Entity{}, false
	}
	return Entity{Name: string(c), EntityType: "state", Observations: []string{"phase: " + str(doc, "phase")}}, true
}

func (g *fakeGraph) Upsert(f graph.File, ents []Entity, _ []string) (bool, error) {
	if g.broken {
		return false, errors.New("read-only")
	}
	g.got = ents
	return true, os.WriteFile(f.Name, []byte(`{"type":"entity","name":"workflow-state","entityType":"state","observations":["x"]}`+"\n"), 0o644)
}

// TestDegradedL3 shows the warning given once while L3 cannot be written,
// and L3 brought up to date with all of L1 on the next success.
func TestDegradedL3(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	write := func(rel, s string) {
		t.Helper()
		name := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := engine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	g := &fakeGraph{broken: true}
	a := New(eng, func(m string) { warnings = append(warnings, m) })
	a.Graph = g
	record := func() {
		t.Helper()
		outs, err := eng.Record([]config.Kept{{Path: WorkflowStatePath, Class: state.ClassWorkflowState, Schema: "workflow-state"}}, state.SourceRecord)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.AfterRecord(outs); err != nil {
			t.Fatal(err)
		}
	}
	write(".claude/memory.jsonl", "")
	write(".claude/memory/MEMORY.md", "") // the protocol writes L2 only into a file the user has
	write(WorkflowStatePath, `{"type":"APEX","phase":"plan","lastUpdated":"2099-01-01T00:00:00Z"}`)
	record()
	write(WorkflowStatePath, `{"type":"APEX","phase":"implement","lastUpdated":"2099-01-01T01:00:00Z"}`)
	record()
	if want := []string{DegradedWarning + " (read-only)"}; !reflect.DeepEqual(warnings, want) || !a.Degraded() {
		t.Fatalf("warnings %q (degraded %v), want %q once", warnings, a.Degraded(), want)
	}
	g.broken = false
	write(".claude/initiative.json", `{"name":"x","status":"created","lastUpdated":"2099-01-01T00:00:00Z"}`)
	outs, err := eng.Record([]config.Kept{{Path: ".claude/initiative.json", Class: state.ClassInitiative, Schema: "initiative"}}, state.SourceRecord)
	if err != nil {
		t.Fatal(err)
	}
	more, err := a.AfterRecord(outs)
	if err != nil {
		t.Fatal(err)
	}
	if a.Degraded() || len(g.got) != 2 || g.got[0].Observations[0] != "phase: implement" {
		t.Fatalf("after recovery: degraded %v, upserted %+v", a.Degraded(), g.got)
	}
	if len(more) != 1 || more[0].Entry == nil || more[0].Entry.Source != state.SourceResolve || more[0].Path != ".claude/memory.jsonl" {
		t.Fatalf("graph write not recorded with source resolve: %+v", more)
	}
}

// The cap of 20 counts and removes only whole lines in the protocol's
// shapes, with a workflow type of strata's schema: a line of the user's
// that starts the same way, and an item the user annotated with nested
// lines, are the user's (attack22-layers L-4, L-5).
func TestIsProtocolLine(t *testing.T) {
	for _, l := range []string{
		"Active APEX workflow: plan completed, implementing auth",
		"Active BRAINSTORM workflow: ideas completed, entering vote",
		"Completed DEBUG for flaky test: fixed",
		"Expired workflow: ONESHOT at fix for (no context)",
		"Expired workflow: ONESHOT at (no phase) for auth",
		"Expired workflow: ONESHOT at for auth",  // an older strata's, for a blank phase
		"Expired workflow: ONESHOT at  for auth", // (two spaces, as an editor may leave it)
	} {
		if !IsProtocolLine(l) {
			t.Errorf("%q: not a protocol line", l)
		}
	}
	for _, l := range []string{
		"Completed onboarding for Alice: see docs/onboarding.md",
		"Active CI workflow: nightly builds run at 02:00",
		"Expired workflow: certificates at noon for the staging cluster",
		"Active APEX workflow: plan completed, implementing auth\n- note by user: chose JWT",
		"Active APEX workflow: see the board",
	} {
		if IsProtocolLine(l) {
			t.Errorf("%q: taken for a protocol line", l)
		}
	}
	schema, ok := schemas.Get("workflow-state")
	if !ok {
		t.Fatal("no workflow-state schema")
	}
	var sc struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &sc); err != nil || !reflect.DeepEqual(sc.Properties.Type.Enum, WorkflowTypes) {
		t.Errorf("WorkflowTypes %q, the schema's enum %q (%v)", WorkflowTypes, sc.Properties.Type.Enum, err)
	}
}
