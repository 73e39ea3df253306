package graph

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// TestChanges: only the members whose observation text differs are set;
// numbers come back as json.Number, exact.
func TestChanges(t *testing.T) {
	doc := map[string]any{"type": "APEX", "phase": "plan", "status": 1.0, "context": nil, "other": "x"}
	e := Entity{Observations: []string{"type: APEX", "phase: implement", "status: 1", "context: 12345678901234567890", "updated: T"}}
	got := Changes(state.ClassWorkflowState, doc, e)
	want := []MemberChange{{"phase", "implement"}, {"context", "12345678901234567890"}, {"lastUpdated", "T"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %#v, want %#v", got, want)
	}
	doc = map[string]any{"status": 2.0}
	e = Entity{Observations: []string{"status: 12345678901234567890"}}
	got = Changes(state.ClassWorkflowState, doc, e)
	if want := []MemberChange{{"status", json.Number("12345678901234567890")}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %#v, want %#v", got, want)
	}
}

// A long value is quoted cut in its observation, naming the L1 file; the
// cut observation maps nothing back, so L1 keeps its whole value.
func TestLongValueCut(t *testing.T) {
	long := strings.Repeat("C", 200000)
	doc := map[string]any{"type": "APEX", "phase": "build", "context": long, "lastUpdated": "2026-03-01T09:00:00Z"}
	e, ok := FromState(state.ClassWorkflowState, doc)
	if !ok {
		t.Fatal("no entity")
	}
	want := "context: " + strings.Repeat("C", 200) + "… (cut; the whole state: strata show .claude/workflow-state.json)"
	if got, _ := e.Value("context"); "context: "+got != want {
		t.Fatalf("context observation = %.300q, want %q", got, want)
	}
	line := renderEntity(e)
	if len(line) > 1000 {
		t.Errorf("entity line is %d bytes", len(line))
	}
	if got := Changes(state.ClassWorkflowState, doc, e); len(got) != 0 {
		t.Errorf("Changes of its own entity = %.300v, want none", got)
	}
	other := map[string]any{"type": "APEX", "phase": "build", "context": "short", "lastUpdated": "2026-03-01T09:00:00Z"}
	if got := Changes(state.ClassWorkflowState, other, e); len(got) != 0 {
		t.Errorf("a cut value was mapped back: %.300v", got)
	}
	if !Same(state.ClassWorkflowState, e, e) {
		t.Error("not Same as itself")
	}
	// a short context an agent set through the memory server still maps back
	e.Observations = append(e.Observations, "context: new")
	if got := Changes(state.ClassWorkflowState, doc, e); len(got) != 1 || got[0].Value != "new" {
		t.Errorf("Changes = %.300v, want context: new", got)
	}
}

// Tie names the repository of an entity's last repo: observation, and
// says whether an observation strata owns follows it (the memory server's
// add_observations appends: attack33b F3); an agent's own note does not.
func TestTie(t *testing.T) {
	for _, tc := range []struct {
		name      string
		obs       []string
		repo      string
		has, last bool
	}{
		{"none", []string{"phase: plan"}, "", false, false},
		{"last", []string{"phase: plan", "repo: /a"}, "/a", true, true},
		{"note after", []string{"phase: plan", "repo: /a", "a note of the agent"}, "/a", true, true},
		{"appended", []string{"phase: plan", "repo: /a", "context: B's"}, "/a", true, false},
		{"appended updated", []string{"repo: /a", "updated: 2026-11-28T00:00:00Z"}, "/a", true, false},
		{"last of two", []string{"repo: /b", "phase: plan", "repo: /a"}, "/a", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, has, last := Tie(Entity{Name: EntityWorkflowState, Observations: tc.obs})
			if repo != tc.repo || has != tc.has || last != tc.last {
				t.Errorf("Tie(%q) = %q, %v, %v; want %q, %v, %v", tc.obs, repo, has, last, tc.repo, tc.has, tc.last)
			}
		})
	}
}
