package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// memSource is a history held in memory: entries (oldest first) whose
// versions are docs, by blob; it counts the versions Build decodes.
type memSource struct {
	entries []state.Entry
	blob    map[[2]string]string // commit, path -> blob
	docs    map[string]any       // blob -> its one document
	decoded int
}

func (m *memSource) add(at time.Time, class state.Class, p, blob string) {
	c := fmt.Sprintf("c%d", len(m.entries))
	m.entries = append(m.entries, state.Entry{Commit: c, Time: at, Path: p, Action: state.ActionUpdate, Source: state.SourceRecord, Class: class})
	if m.blob == nil {
		m.blob = map[[2]string]string{}
	}
	m.blob[[2]string{c, p}] = blob
}

func (m *memSource) Log(state.LogQuery) ([]state.Entry, error) {
	out := make([]state.Entry, len(m.entries))
	for i, e := range m.entries {
		out[len(out)-1-i] = e
	}
	return out, nil
}

func (m *memSource) RejectedLog(state.LogQuery) ([]state.Entry, error) { return nil, nil }

func (m *memSource) FileAt(commit, p string) ([]byte, error) {
	b, ok := m.blob[[2]string{commit, p}]
	if !ok {
		return nil, state.ErrNotFound
	}
	return []byte(b + "\n"), nil
}

func (m *memSource) Decode(commit, p string) ([]any, error) {
	b, ok := m.blob[[2]string{commit, p}]
	if !ok {
		return nil, state.ErrNotFound
	}
	m.decoded++
	return []any{m.docs[b]}, nil
}

func (m *memSource) MergeDecisions(string) ([]engine.MergeDecision, error) { return nil, nil }

// outcomeDoc is a Phase Outcome of n pending decisions D-0 … D-(n-1).
func outcomeDoc(n int, question string) any {
	ds := make([]any, n)
	for i := range ds {
		ds[i] = map[string]any{"id": fmt.Sprintf("D-%d", i), "type": "t", "question": question, "options": []any{"a", "b"}, "recommended": "a"}
	}
	return map[string]any{"phase": "plan", "feature": "f", "pending_decisions": ds}
}

// One Phase Outcome of many pending decisions: each marker finds its
// decision through an index of the outcome's decisions, so the page costs
// what the outcome's size does. (It scanned every decision of the outcome
// for each one, quadratic: this test then ran past go test's timeout.)
func TestBuildManyDecisionsLinear(t *testing.T) {
	const n = 500_000
	m := &memSource{docs: map[string]any{"o": outcomeDoc(n, "q")}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	m.add(start, state.ClassPhaseOutcome, "PhaseOutcomes/f/001-plan.yaml", "o")
	tl, err := Build(m, time.Time{})
	require.NoError(t, err)
	found := 0
	for _, e := range tl.Events {
		if e.Lane == LaneDecisions {
			require.True(t, strings.HasPrefix(e.Detail, "decision D-"), e.Detail)
			found++
		}
	}
	require.Positive(t, found)
}
