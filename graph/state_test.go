package graph

import (
	"encoding/json"
	"reflect"
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
