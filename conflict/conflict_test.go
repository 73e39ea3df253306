package conflict

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(l Layer, d time.Duration) LayerTime {
		return LayerTime{Layer: l, Present: true, Time: t0.Add(d), Basis: BasisCommit}
	}
	cleared := func(lt LayerTime) LayerTime { lt.Cleared = true; return lt }
	tests := []struct {
		name     string
		in       Input
		winner   Layer
		actions  []Action
		warnings []string
	}{
		{name: "nothing anywhere", in: Input{Item: "workflow-state"}, actions: []Action{}},
		{name: "L3 newer rewrites L1", in: Input{Item: "w", Layers: []LayerTime{at(L1, 0), at(L3, time.Second)}},
			winner: L3, actions: []Action{{L1, ActionRewrite, L3}}},
		{name: "L1 newer rewrites L3", in: Input{Item: "w", Layers: []LayerTime{at(L1, time.Minute), at(L3, 0)}},
			winner: L1, actions: []Action{{L3, ActionRewrite, L1}}},
		{name: "a tie goes to L1", in: Input{Item: "w", Layers: []LayerTime{at(L1, 0), at(L3, 0)}},
			winner: L1, actions: []Action{{L3, ActionRewrite, L1}}},
		{name: "in sync: no action, no warning", in: Input{Item: "w", InSync: true, Layers: []LayerTime{at(L1, 0), at(L3, time.Hour)}},
			winner: L3, actions: []Action{}},
		{name: "more than 5 minutes apart: stale", in: Input{Item: "w", Layers: []LayerTime{at(L1, 0), at(L3, 5*time.Minute+time.Second)}},
			winner: L3, actions: []Action{{L1, ActionRewrite, L3}}, warnings: []string{"w: L1 is stale: 5m1s older than L3"}},
		{name: "exactly 5 minutes: not stale", in: Input{Item: "w", Layers: []LayerTime{at(L1, 5*time.Minute), at(L3, 0)}},
			winner: L1, actions: []Action{{L3, ActionRewrite, L1}}},
		{name: "L3 missing is written", in: Input{Item: "w", Layers: []LayerTime{at(L1, 0)}},
			winner: L1, actions: []Action{{L3, ActionRewrite, L1}}},
		{name: "L1 missing is written from L3", in: Input{Item: "w", Layers: []LayerTime{at(L3, 0)}},
			winner: L3, actions: []Action{{L1, ActionRewrite, L3}}},
		{name: "L1 cleared later clears L3", in: Input{Item: "w", Layers: []LayerTime{cleared(at(L1, time.Second)), at(L3, 0)}},
			winner: L1, actions: []Action{{L3, ActionClear, L1}}},
		{name: "cleared and missing: nothing to do", in: Input{Item: "w", Layers: []LayerTime{cleared(at(L1, 0))}},
			winner: L1, actions: []Action{}},
		{name: "a known time beats an unknown one", in: Input{Item: "w", Layers: []LayerTime{{Layer: L1, Present: true}, at(L3, 0)}},
			winner: L3, actions: []Action{{L1, ActionRewrite, L3}}},
		{name: "L2 never wins", in: Input{Item: "w", Layers: []LayerTime{at(L1, 0), at(L2, time.Hour), at(L3, -time.Second)}},
			winner: L1, actions: []Action{{L3, ActionRewrite, L1}}},
		{name: "L2 alone: no winner", in: Input{Item: "w", Layers: []LayerTime{at(L2, 0)}}, actions: []Action{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.in)
			assert.Equal(t, tt.winner, d.Winner)
			assert.Equal(t, tt.actions, d.Actions)
			assert.Equal(t, tt.warnings, d.Warnings)
			assert.Len(t, d.Layers, 3)
			for _, a := range d.Actions {
				assert.NotEqual(t, L2, a.Layer, "L2 is never rewritten")
			}
		})
	}
}

func TestNextFree(t *testing.T) {
	taken := map[string]bool{"P/auth/003-plan.yaml": true, "P/0009-x.yaml": true}
	for _, c := range []struct{ in, want string }{
		{"P/auth/002-plan.yaml", "P/auth/004-plan.yaml"}, // 003 is taken
		{"P/auth/plan.yaml", "P/auth/002-plan.yaml"},
		{"P/0008-x.yaml", "P/0010-x.yaml"}, // width kept, 0009 taken
		{"P/12-a-b.yaml", "P/13-a-b.yaml"},
		{"P/123.yaml", "P/002-123.yaml"}, // a number without "-" is a name
		{"P/-1.yaml", "P/002--1.yaml"},
	} {
		if got := NextFree(c.in, func(p string) bool { return taken[p] }); got != c.want {
			t.Errorf("NextFree(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// NumberKey is the same for every name of one number in one folder, so a
// taken that answers for it keeps NextFree off a number another name holds.
func TestNumberKey(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"P/auth/003-test.yaml", "P/auth/003-review.yaml", true},
		{"P/auth/3-x.yaml", "P/auth/003-y.yaml", true},
		{"P/auth/003-x.yaml", "P/billing/003-x.yaml", false},
		{"P/auth/003-x.yaml", "P/auth/004-x.yaml", false},
	} {
		if got := NumberKey(c.a) == NumberKey(c.b); got != c.same {
			t.Errorf("NumberKey(%q) == NumberKey(%q): %v, want %v", c.a, c.b, got, c.same)
		}
	}
	for _, p := range []string{"P/plan.yaml", "P/123.yaml", "P/-1.yaml"} {
		if k := NumberKey(p); k != "" {
			t.Errorf("NumberKey(%q) = %q, want none", p, k)
		}
	}
	taken := map[string]bool{NumberKey("P/auth/002-test.yaml"): true}
	if got := NextFree("P/auth/001-plan.yaml", func(p string) bool { return taken[p] || taken[NumberKey(p)] }); got != "P/auth/003-plan.yaml" {
		t.Errorf("NextFree past a taken number = %q, want P/auth/003-plan.yaml", got)
	}
}
