package timeline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	size    map[string]int64     // blob -> its size, when not its name's
	// decisions are the merge decisions of a commit (sync's)
	decisions map[string][]engine.MergeDecision
	decoded   int
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

func (m *memSource) DecodeKey(commit, p string) (string, int64, error) {
	b, ok := m.blob[[2]string{commit, p}]
	if !ok {
		return "", 0, state.ErrNotFound
	}
	if n, ok := m.size[b]; ok {
		return b, n, nil
	}
	return b, int64(len(b)), nil
}

func (m *memSource) MergeDecisions(c string) ([]engine.MergeDecision, error) {
	return m.decisions[c], nil
}

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
	tl, err := Build(m, Options{})
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

// A workflow state going back and forth between two versions, as a pushed
// history can for a commit each: each distinct version is decoded once
// (it was decoded again for each commit, 0.8 s a version of 9 MB), and
// every span is on the page.
func TestBuildDecodesEachVersionOnce(t *testing.T) {
	m := &memSource{docs: map[string]any{
		"a": map[string]any{"type": "APEX", "phase": "alpha"},
		"b": map[string]any{"type": "APEX", "phase": "beta"},
	}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const n = 1000
	for i := 0; i < n; i++ {
		m.add(start.Add(time.Duration(i)*time.Minute), state.ClassWorkflowState, ".claude/workflow-state.json", []string{"a", "b"}[i%2])
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	require.Equal(t, 2, m.decoded)
	require.Len(t, tl.Spans, n)
	require.Equal(t, "beta", tl.Spans[n-1].Label)
	require.Zero(t, tl.Unread)
}

// Distinct versions are decoded until MaxDecodeRead: the version that
// would pass it and every later one are not read, their phases not on
// the page, which says from when.
func TestBuildStopsAtMaxDecodeRead(t *testing.T) {
	const mib = 1 << 20
	m := &memSource{docs: map[string]any{}, size: map[string]int64{}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const n = MaxDecodeRead/mib + 10
	for i := 0; i < n; i++ {
		b := fmt.Sprintf("v%d", i)
		m.docs[b], m.size[b] = map[string]any{"phase": fmt.Sprintf("p%d", i)}, mib
		m.add(start.Add(time.Duration(i)*time.Minute), state.ClassWorkflowState, ".claude/workflow-state.json", b)
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	read := MaxDecodeRead / mib
	require.Equal(t, read, m.decoded)
	require.Len(t, tl.Spans, read)
	require.Equal(t, n-read, tl.Unread)
	cut := start.Add(time.Duration(read) * time.Minute)
	require.Equal(t, cut, tl.ReadCut)
	require.Equal(t, cut, tl.Spans[read-1].End, "the last span read ends where reading stopped")
	require.Len(t, tl.Events, n, "every version is still an event")

	var page strings.Builder
	require.NoError(t, Render(&page, tl))
	require.Contains(t, page.String(), fmt.Sprintf("The phases and decisions of the %d versions from %s on are not read: a page decodes at most 64 MiB of workflow states, Phase Outcomes and resolutions", n-read, CutStamp(cut)))
}

// One commit naming one blob of 2 000 decisions with long questions at 200
// paths (a pushed commit of a few hundred bytes): at most MaxDecisions
// markers are drawn, each detail is cut at MaxDiff, and the details count
// against MaxDiffs with the diffs, so the page stays small. It was 400 200
// events and a 391 MB page (attack34 M1).
func TestBuildBoundsDecisions(t *testing.T) {
	m := &memSource{docs: map[string]any{"o": outcomeDoc(2000, strings.Repeat("Q", 400))}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const paths = 200
	for i := 0; i < paths; i++ {
		m.add(start, state.ClassPhaseOutcome, fmt.Sprintf("PhaseOutcomes/f%d/001-plan.yaml", i), "o")
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	require.Equal(t, 1, m.decoded)
	decisions, details := 0, 0
	for _, e := range tl.Events {
		if e.Lane != LaneDecisions {
			details += len(e.Detail) // the diffs
			continue
		}
		decisions++
		require.LessOrEqual(t, len(e.Label), 300, e.Label)
		if strings.Contains(e.Detail, "details left out of this page") {
			require.Regexp(t, `^decision D-[0-9]+: details left out of this page; see its Phase Outcome with: strata show PhaseOutcomes/f[0-9]+/001-plan.yaml --rev c[0-9]+ \(strata decisions lists the pending ones\)\n$`, e.Detail)
			continue
		}
		details += len(e.Detail)
	}
	require.Equal(t, MaxDecisions, decisions)
	require.Equal(t, start, tl.DecisionCut)
	require.LessOrEqual(t, details, MaxDiffs)
	require.Positive(t, tl.DetailsLeftOut)
	require.Len(t, tl.Events, paths+MaxDecisions)

	var page strings.Builder
	require.NoError(t, Render(&page, tl))
	require.Less(t, page.Len(), 6<<20)
	for _, want := range []string{
		fmt.Sprintf("The decisions that first appeared from %s on are not drawn: a page draws at most 10 000.", CutStamp(start)),
		fmt.Sprintf("The details of %d decisions are left out: they share the page's 2 MiB with the diffs.", tl.DetailsLeftOut),
	} {
		require.True(t, strings.Contains(page.String(), want), "the page says %q", want)
	}
}

// A decision's detail is cut at MaxDiff, naming the version that holds it
// whole, and its label is cut after MaxPhase bytes.
func TestBuildCutsLongDecisions(t *testing.T) {
	m := &memSource{docs: map[string]any{"o": outcomeDoc(1, strings.Repeat("é", 1<<20))}}
	m.add(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), state.ClassPhaseOutcome, "PhaseOutcomes/f/001-plan.yaml", "o")
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	var d Event
	for _, e := range tl.Events {
		if e.Lane == LaneDecisions {
			d = e
		}
	}
	require.LessOrEqual(t, len(d.Detail), MaxDiff+200)
	require.Greater(t, len(d.Detail), MaxDiff-10, "cut at a character, not at the line before the question")
	require.True(t, utf8.ValidString(d.Detail))
	require.True(t, strings.HasSuffix(d.Detail, fmt.Sprintf("... cut at %d bytes; see all of it with: strata show PhaseOutcomes/f/001-plan.yaml --rev c0\n", MaxDiff)), "%.300q", d.Detail)
	require.Equal(t, "decision D-0 pending ("+strings.Repeat("é", MaxPhase/2)+"…)", d.Label)
}

// Text a remote recorded carries no control character to a terminal when
// the page goes to stdout: a phase (span text, aria-label, data-span) and
// a session's lane name are quoted as log quotes them, and in the JSON
// data block C1 and bidi controls are \u escapes, as C0 ones already were.
func TestRenderQuotesControls(t *testing.T) {
	hostile := "x\x1b]0;PWNED\a\x1b[2J\u009b31m\u202e\u2066\u0085"
	m := &memSource{docs: map[string]any{"w": map[string]any{"type": "APEX", "phase": hostile}}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	m.add(start, state.ClassWorkflowState, ".claude/workflow-state.json", "w")
	m.add(start.Add(time.Hour), state.ClassPhaseOutput, "PhaseOutputs/s\u202e1/out.json", "detail "+hostile)
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	require.Equal(t, `"x\x1b]0;PWNED\a\x1b[2J\u009b31m\u202e\u2066\u0085"`, tl.Spans[0].Label)
	require.Contains(t, tl.Lanes, `session "s\u202e1"`)
	var page strings.Builder
	require.NoError(t, Render(&page, tl))
	require.Contains(t, page.String(), "detail x\\u001b]0;PWNED\\u0007\\u001b[2J\\u009b31m\\u202e\\u2066\\u0085", "the diff, escaped in the data block")
	for i, r := range page.String() {
		bad := r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		require.False(t, bad, "control character %U at byte %d: %.80q", r, i, page.String()[max(0, i-40):])
	}
}

// A pushed history whose workflow state changes phase in every commit has
// a span per commit: past Dense spans the phases lane is drawn as at most
// Buckets count markers, as a lane of events is, each listing at most
// MaxInBucket spans, so what the lane adds to the page is bounded whatever
// the number of spans. It drew each span as its own button: 100 000
// pushed phase changes made a 53 MB page of 100 000 buttons (attack34c).
func TestRenderBucketsManySpans(t *testing.T) {
	const n = 40_000 // over Buckets*MaxInBucket: the lists are cut too
	m := &memSource{docs: map[string]any{"a": map[string]any{"type": "APEX", "phase": "plan"}, "b": map[string]any{"type": "APEX", "phase": "build"}}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		m.add(start.Add(time.Duration(i)*time.Minute), state.ClassWorkflowState, ".claude/workflow-state.json", []string{"a", "b"}[i%2])
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	require.Len(t, tl.Spans, n)

	var page strings.Builder
	require.NoError(t, Render(&page, tl))
	p := page.String()
	require.Zero(t, strings.Count(p, `class="m span"`), "no span drawn one by one")
	lane := p[strings.Index(p, `data-lane="workflow phases"`):]
	lane = lane[:strings.Index(lane, "</section>")]
	require.Contains(t, lane, `data-count="40000" data-dense="true"`)
	require.Contains(t, lane, "40000 events, grouped")
	counts := regexp.MustCompile(`data-bucket="\d+">(\d+)</button>`).FindAllStringSubmatch(lane, -1)
	require.Len(t, counts, Buckets)
	total := 0
	for _, c := range counts {
		k, err := strconv.Atoi(c[1])
		require.NoError(t, err)
		total += k
	}
	require.Equal(t, n, total, "every span is counted once")
	require.Regexp(t, `aria-label="800 phases in workflow phases from 2026-11-01T00:00:00Z to 2026-11-01T13:19:00Z"`, lane)
	// The data block lists at most MaxInBucket spans a bucket, after the
	// events, whose numbers (#ev-N) stay theirs.
	require.Equal(t, Buckets*MaxInBucket, strings.Count(p, `"k":"span"`))
	require.Greater(t, strings.Index(p, `"k":"span"`), strings.LastIndex(p, `"k":"update"`))
	require.True(t, strings.Contains(p, `{"l":"phase plan from 2026-11-01T00:00:00Z to 2026-11-01T00:01:00Z","d":"","k":"span"}`), "the first span listed")
	require.Less(t, len(lane), 20<<10)
}

// TestBuildBoundsEvents: past MaxEvents recorded versions the later ones
// are not on the page, which says from when and how to see them (--since):
// every other bound left each version an event, so the page grew with
// the pushed history (attack34c: 400 000 phase changes, a 210 MB page).
func TestBuildBoundsEvents(t *testing.T) {
	m := &memSource{docs: map[string]any{}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const n = MaxEvents + 1234
	for i := range n {
		m.add(start.Add(time.Duration(i)*time.Second), state.ClassClaudeJSON, ".claude/notes.json", fmt.Sprintf("v%d", i))
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	require.Len(t, tl.Events, MaxEvents)
	require.Equal(t, n-MaxEvents, tl.EventsLeftOut)
	cut := start.Add(MaxEvents * time.Second)
	require.Equal(t, cut, tl.EventCut)
	require.True(t, tl.Events[len(tl.Events)-1].Time.Before(cut), "the oldest are kept")

	var page strings.Builder
	require.NoError(t, Render(&page, tl))
	require.Contains(t, page.String(), fmt.Sprintf("The %d versions recorded from %s on are not on this page: a page shows at most 50 000 of them, the oldest first. <code>strata timeline --since %s</code>", n-MaxEvents, CutStamp(cut), CutStamp(cut)))
}

// A sync merge's decisions are labelled as log says them: a merge of both
// sides' edits and both kept name no winner or loser, and no restore of
// an empty revision (attack35e L1: "won, losing side (strata restore PATH
// --rev ”)" on every MEMORY.md merge).
func TestBuildLabelsMergeDecisions(t *testing.T) {
	m := &memSource{}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range []string{"m1.md", "m2.md", "both.yaml", "kept.json", "won.json"} {
		m.add(at.Add(time.Duration(i)*time.Minute), state.ClassMemory, p, "b"+p)
		m.entries[len(m.entries)-1].Source = state.SourceSync
	}
	m.decisions = map[string][]engine.MergeDecision{
		"c0": {{Path: "m1.md", Merged: true}},
		"c1": {{Path: "m2.md", Merged: true, Dropped: "an edit of a deleted entity"}},
		"c2": {{Path: "both.yaml", KeptBoth: "002-x.yaml"}},
		"c3": {{Path: "kept.json", Kept: "invalid"}},
		"c4": {{Path: "won.json", Winner: "aaaaaaaaaaaa", Loser: "bbbbbbbbbbbb"}},
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	labels := map[string]string{}
	for _, e := range tl.Events {
		labels[e.Path] = e.Label
	}
	require.Contains(t, labels["m1.md"], "; merged: both sides' edits kept")
	require.Contains(t, labels["m2.md"], "; merged: "+engine.MergedExcept+"an edit of a deleted entity")
	require.Contains(t, labels["both.yaml"], "; kept both: the version recorded later is now 002-x.yaml")
	require.Contains(t, labels["kept.json"], "; kept local: invalid")
	require.Contains(t, labels["won.json"], "won, losing side")
	for p, l := range labels {
		if p != "won.json" {
			require.NotContains(t, l, "won, losing side", p)
		}
	}
}

// A merge decision's winner and loser are quoted in the label as log
// quotes them: a remote writes the merge's message, and the page may go
// to a terminal (attack36b F4: a forged "id" set the window title and
// cleared the screen through strata timeline).
func TestBuildQuotesMergeIDs(t *testing.T) {
	m := &memSource{}
	m.add(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), state.ClassClaudeJSON, ".claude/notes.json", "b")
	m.entries[0].Source = state.SourceSync
	m.decisions = map[string][]engine.MergeDecision{
		"c0": {{Path: ".claude/notes.json", Winner: "\x1b]0;PWNED\a", Loser: "\x1b[2J\x1b[3J"}},
	}
	tl, err := Build(m, Options{})
	require.NoError(t, err)
	require.Len(t, tl.Events, 1)
	l := tl.Events[0].Label
	require.Contains(t, l, `"\x1b]0;PWNED\a" won, losing side "\x1b[2J\x1b[3J"`)
	require.NotRegexp(t, "[\x00-\x1f\x7f]", l)
}
