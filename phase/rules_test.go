package phase

import (
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

func TestTiers(t *testing.T) {
	want := []string{"query", "strategy", "search", "extraction", "reading", "analysis", "validation", "report"}
	for i, w := range want {
		got, ok := TierLabel(i + 1)
		if !ok || got != w || Tiers[i] != (Tier{i + 1, w}) {
			t.Errorf("tier %d = %q, %v (%+v); want %q", i+1, got, ok, Tiers[i], w)
		}
	}
	for _, bad := range []int{0, 9, -1} {
		if _, ok := TierLabel(bad); ok {
			t.Errorf("TierLabel(%d) is a tier", bad)
		}
	}
	if name, ok := PhaseOutputName(8); !ok || name != "phase-08-report.json" {
		t.Errorf("PhaseOutputName(8) = %q, %v", name, ok)
	}
}

func TestAppendOnly(t *testing.T) {
	const p = "PhaseOutcomes/auth/001-plan.yaml"
	prev := []byte("phase: plan\n")
	for _, tc := range []struct {
		name   string
		class  string
		prev   []byte
		cur    []byte
		exists bool
		want   string
	}{
		{"unchanged", "phase-outcome", prev, prev, true, ""},
		{"new", "phase-outcome", nil, prev, true, ""},
		{"changed", "phase-outcome", prev, []byte("phase: fix\n"), true, "cannot change"},
		{"deleted", "phase-outcome", prev, nil, false, "cannot be deleted"},
		{"resolution changed", "decision-resolution", prev, []byte("x: 1\n"), true, "cannot change"},
		{"other class", "workflow-state", prev, []byte("{}"), true, ""},
	} {
		ps := AppendOnly(state.Class(tc.class), p, tc.prev, tc.cur, tc.exists)
		switch {
		case tc.want == "" && len(ps) != 0:
			t.Errorf("%s: %v, want no problem", tc.name, ps)
		case tc.want != "" && (len(ps) != 1 || !ps.Invalid() || !strings.Contains(ps[0].Message, tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, ps, tc.want)
		}
	}
	// the restore command in the message is one shell word (attack24 G3):
	// a remote or a clone names the folder
	const odd = "PhaseOutcomes/x $(touch PWNED)/001-plan.yaml"
	for _, ps := range []state.Problems{
		AppendOnly(state.ClassPhaseOutcome, odd, prev, nil, false),
		AppendOnly(state.ClassPhaseOutcome, odd, prev, []byte("phase: fix\n"), true),
	} {
		if len(ps) != 1 || !strings.Contains(ps[0].Message, "`strata restore 'PhaseOutcomes/x $(touch PWNED)/001-plan.yaml'`") {
			t.Errorf("%s: restore command not one shell word: %v", odd, ps)
		}
	}
}
