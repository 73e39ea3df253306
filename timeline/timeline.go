// Package timeline builds `strata timeline`'s page: the recorded history of
// a repository's kept files as lanes of events on one time axis (one lane
// per layer and per phase-output session, workflow phases as spans,
// decisions as markers), with each event's diff computed here and embedded
// in a self-contained HTML page that needs no network to be viewed. Build
// reads the history through the engine's verbs; Render writes the page.
package timeline

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/textdiff"
)

// Source is what Build reads: *engine.Engine's history verbs.
type Source interface {
	Log(q state.LogQuery) ([]state.Entry, error)
	RejectedLog(q state.LogQuery) ([]state.Entry, error)
	// FileAt refuses a version over max_size with an error matching
	// state.ErrTooLarge, unread: the event names it instead of a diff.
	FileAt(commit, path string) ([]byte, error)
	Decode(commit, path string) ([]any, error)
	MergeDecisions(commit string) ([]engine.MergeDecision, error)
}

var _ Source = (*engine.Engine)(nil)

// Event kinds. A kind names how the page draws an event.
const (
	KindAdd      = "add"
	KindUpdate   = "update"
	KindDelete   = "delete"
	KindRejected = "rejected"
	KindExpire   = "expire"
	KindSync     = "sync"
	KindRestore  = "restore"
	KindResolve  = "resolve"
	KindPending  = "decision-pending"
	KindResolved = "decision-resolved"
)

// The fixed lanes, top to bottom; phase-output sessions follow.
const (
	LanePhases    = "workflow phases"
	LaneDecisions = "decisions"
	LaneL1        = "L1 files"
	LaneL2        = "L2 MEMORY.md"
	LaneL3        = "L3 graph"
)

// MaxDiff is the most bytes of one event's diff the page embeds; a longer
// diff is cut and says how to see all of it.
const MaxDiff = 8 << 10

// MaxPhase is the most bytes of a workflow phase a span's label shows: a
// recorded phase can be any string, and a history pushed to a remote can
// go back and forth between two long ones, a span each.
const MaxPhase = 120

// MaxDiffs, MaxDiffEvents and MaxDiffRead bound the diffs of a whole page:
// once the next diff would take the page's past MaxDiffs bytes, or
// MaxDiffEvents events carry theirs, or the versions read for them pass
// MaxDiffRead bytes, that event and every later one carry the command that
// prints its diff instead (leftOut), and Build reads no more versions for
// diffs. A history pushed to a remote can hold any number of versions for
// a few hundred bytes each (two blobs, a commit per version; versions of
// one long line, each diff cut to its header, cost the page little but
// the build a whole read each): without a bound, its page, and the time
// and memory to build it, grow with it.
const (
	MaxDiffs      = 2 << 20
	MaxDiffEvents = 10_000
	MaxDiffRead   = 256 << 20
)

// Event is one thing that happened at one moment on one lane.
type Event struct {
	Lane   string
	Time   time.Time
	Kind   string
	Path   string
	Commit string
	Label  string // one line: what happened, as a screen reader reads it
	Detail string // the diff, or what a decision or a merge says
}

// Span is a workflow phase, from the version that entered it to the next
// version with another phase (or the end of the page).
type Span struct {
	Label      string
	Start, End time.Time
}

// Timeline is everything the page shows.
type Timeline struct {
	Lanes    []string // names, top to bottom
	Events   []Event  // oldest first
	Spans    []Span
	From, To time.Time
	Since    time.Time // zero: the whole history
	// LeftOut counts the events past the page's diffs (MaxDiffs,
	// MaxDiffEvents, MaxDiffRead), the first of them at Cut: `--since Cut` gives a page
	// that starts there.
	LeftOut int
	Cut     time.Time
}

// Build reads the history at or after since (zero: all of it).
func Build(src Source, since time.Time) (*Timeline, error) {
	q := state.LogQuery{Since: since}
	kept, err := src.Log(q)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	rejected, err := src.RejectedLog(q)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	type item struct {
		state.Entry
		rejected bool
	}
	var items []item
	// Logs are newest first; the page wants oldest first, stable in each
	// commit's path order.
	for i := len(kept) - 1; i >= 0; i-- {
		items = append(items, item{Entry: kept[i]})
	}
	for i := len(rejected) - 1; i >= 0; i-- {
		items = append(items, item{Entry: rejected[i], rejected: true})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Time.Before(items[j].Time) })

	t := &Timeline{Since: since}
	sessions := map[string]bool{}
	last := map[string][]byte{} // path -> the state ref's version before the current item
	known := map[string]bool{}
	merges := map[string][]engine.MergeDecision{}
	outcomes := map[string]phase.Outcome{} // path -> latest version
	decided := map[[2]string]phase.Resolution{}
	decisionAt := map[[2]string]time.Time{}
	var wf []Span
	inPhase := ""                 // the phase of the open span, whole
	spent, shown, read := 0, 0, 0 // bytes of diffs on the page, events carrying one, bytes of versions read for them
	full := false                 // the page's diffs are spent: this event and the later ones carry their command

	for _, it := range items {
		e := Event{Time: it.Time, Path: it.Path, Commit: it.Commit, Lane: laneOf(it.Class, it.Path)}
		if strings.HasPrefix(e.Lane, "session ") {
			sessions[e.Lane] = true
		}
		var cur []byte
		if !full {
			prev, ok := last[it.Path], known[it.Path]
			if !ok {
				prev = parentVersion(src, it.Commit, it.Path, it.rejected)
				read += len(prev)
			}
			var over error // the version is over max_size: named, never read
			if it.Action != state.ActionDelete {
				cur, err = src.FileAt(it.Commit, it.Path)
				read += len(cur)
				switch {
				case errors.Is(err, state.ErrTooLarge):
					over = err
				case err != nil && !errors.Is(err, state.ErrNotFound):
					return nil, err
				}
			}
			e.Detail = cut(textdiff.Unified(side("a", it.Path, prev), side("b", it.Path, cur), prev, cur, 3), it.Commit, it.Path)
			if over != nil {
				e.Detail = over.Error() + "\n"
			}
			if shown == MaxDiffEvents || spent+len(e.Detail) > MaxDiffs || read > MaxDiffRead {
				full, t.Cut = true, it.Time
			} else {
				spent, shown = spent+len(e.Detail), shown+1
			}
		}
		if full {
			e.Detail = leftOut(it.Entry, it.rejected)
			t.LeftOut++
		}
		e.Kind = kindOf(it.Entry, it.rejected)
		e.Label = recordLabel(it.Entry, it.rejected)
		if it.Source == state.SourceSync && !it.rejected {
			ds, ok := merges[it.Commit]
			if !ok {
				ds, _ = src.MergeDecisions(it.Commit)
				merges[it.Commit] = ds
			}
			for _, d := range ds {
				if d.Path != it.Path {
					continue
				}
				if d.Kept != "" {
					e.Label += "; kept local: " + state.TermSafe(d.Kept)
				} else {
					e.Label += fmt.Sprintf("; %s won, losing side %s (strata restore %s --rev %s)",
						state.ShortID(d.Winner), state.ShortID(d.Loser), state.ShellWord(d.Path), state.ShellWord(d.Loser))
				}
			}
		}
		t.Events = append(t.Events, e)
		if it.rejected {
			continue
		}
		if !full {
			last[it.Path], known[it.Path] = cur, true
		}

		// What the new version says about phases and decisions (read here
		// also past the page's diffs, where cur is not).
		var doc any
		if it.Action != state.ActionDelete && (it.Class == state.ClassWorkflowState || it.Class == state.ClassPhaseOutcome || it.Class == state.ClassDecisionResolution) {
			if docs, err := src.Decode(it.Commit, it.Path); err == nil && len(docs) == 1 {
				doc = docs[0]
			}
		}
		switch it.Class {
		case state.ClassWorkflowState:
			ph := ""
			if m, ok := doc.(map[string]any); ok {
				ph, _ = m["phase"].(string)
			}
			if n := len(wf); n > 0 && wf[n-1].End.IsZero() {
				if inPhase == ph {
					continue
				}
				wf[n-1].End = it.Time
			}
			inPhase = strings.Clone(ph) // not a view of the whole version's text
			if ph != "" {
				wf = append(wf, Span{Label: phaseLabel(ph), Start: it.Time})
			}
		case state.ClassPhaseOutcome:
			if doc == nil {
				continue
			}
			o := phase.ParseOutcome(it.Path, doc)
			outcomes[it.Path] = o
			for _, d := range o.Decisions {
				k := [2]string{it.Path, d.ID}
				if _, seen := decisionAt[k]; !seen {
					decisionAt[k] = it.Time
				}
			}
		case state.ClassDecisionResolution:
			if doc == nil {
				continue
			}
			r := phase.ParseResolution(it.Path, doc)
			k := [2]string{phase.OutcomePath(it.Path, r.Outcome), r.Resolves}
			if _, done := decided[k]; !done {
				decided[k] = r
			}
		}
	}
	for i := range wf {
		t.Spans = append(t.Spans, wf[i])
	}

	// One marker per decision, where it first appeared, with what the
	// outcome's latest version says of it: found by ID through an index of
	// each outcome's decisions (the last of equal IDs), made once, so that
	// an outcome of D decisions costs D, not D² (attack34 H2).
	index := map[string]map[string]int{}
	for k, at := range decisionAt {
		ds := outcomes[k[0]].Decisions
		byID, ok := index[k[0]]
		if !ok {
			byID = make(map[string]int, len(ds))
			for i, x := range ds {
				byID[x.ID] = i
			}
			index[k[0]] = byID
		}
		var d phase.Decision
		if i, ok := byID[k[1]]; ok {
			d = ds[i]
		}
		e := Event{Lane: LaneDecisions, Time: at, Path: k[0], Kind: KindPending}
		detail := fmt.Sprintf("decision %s (%s)\nquestion: %s\noptions: %s\nrecommended: %s\n",
			d.ID, k[0], d.Question, strings.Join(d.Options, ", "), d.Recommended)
		if r, ok := decided[k]; ok {
			e.Kind = KindResolved
			e.Label = fmt.Sprintf("decision %s resolved: %s (%s)", state.TermSafe(d.ID), state.TermSafe(r.Choice), state.TermSafe(d.Question))
			detail += fmt.Sprintf("resolved: %s\nby: %s\nat: %s\nin: %s\n", r.Choice, r.By, r.At, r.Path)
			if r.Note != "" {
				detail += "note: " + r.Note + "\n"
			}
		} else {
			e.Label = fmt.Sprintf("decision %s pending (%s)", state.TermSafe(d.ID), state.TermSafe(d.Question))
			detail += "pending\n"
		}
		e.Detail = detail
		t.Events = append(t.Events, e)
	}
	sort.SliceStable(t.Events, func(i, j int) bool {
		a, b := t.Events[i], t.Events[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.Lane == b.Lane && a.Path < b.Path
	})

	t.Lanes = []string{LanePhases, LaneDecisions, LaneL1, LaneL2, LaneL3}
	var names []string
	for s := range sessions {
		names = append(names, s)
	}
	sort.Strings(names)
	t.Lanes = append(t.Lanes, names...)
	t.bounds()
	return t, nil
}

// bounds sets From and To around every event and span, and closes the
// open span at To.
func (t *Timeline) bounds() {
	for i, e := range t.Events {
		if i == 0 || e.Time.Before(t.From) {
			t.From = e.Time
		}
		if i == 0 || e.Time.After(t.To) {
			t.To = e.Time
		}
	}
	if !t.Since.IsZero() && (t.From.IsZero() || t.Since.Before(t.From)) {
		t.From = t.Since
	}
	for i := range t.Spans {
		if t.Spans[i].End.IsZero() {
			t.Spans[i].End = t.To
		}
	}
}

// parentVersion is a path's version in the state ref just before commit
// (nil when none): the first parent of a kept commit, or for a rejected
// version, the kept snapshot its tree was built from.
func parentVersion(s Source, commit, p string, rejected bool) []byte {
	if rejected {
		// The rejected commit's tree is the state snapshot with the rejected
		// version applied: there is no kept version to read apart from it.
		return nil
	}
	data, err := s.FileAt(commit+"^", p)
	if err != nil {
		return nil
	}
	return data
}

// laneOf names the lane of a path of class c.
func laneOf(c state.Class, p string) string {
	switch c {
	case state.ClassMemory:
		return LaneL2
	case state.ClassGraph:
		return LaneL3
	case state.ClassPhaseOutput:
		return "session " + path.Base(path.Dir(p))
	}
	return LaneL1
}

func kindOf(en state.Entry, rejected bool) string {
	switch {
	case rejected:
		return KindRejected
	case en.Source == state.SourceExpire:
		return KindExpire
	case en.Source == state.SourceSync:
		return KindSync
	case en.Source == state.SourceRestore:
		return KindRestore
	case en.Source == state.SourceResolve:
		return KindResolve
	case en.Action == state.ActionAdd:
		return KindAdd
	case en.Action == state.ActionDelete:
		return KindDelete
	}
	return KindUpdate
}

func side(prefix, p string, data []byte) string {
	if data == nil {
		return "/dev/null"
	}
	return prefix + "/" + p
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// phaseLabel is a span's label: its phase, cut after MaxPhase bytes (at a
// character's start), always a copy: a decoded string is a view of the
// whole version's text, which the span would keep.
func phaseLabel(ph string) string {
	if len(ph) <= MaxPhase {
		return strings.Clone(ph)
	}
	end := 0
	for i := range ph {
		if i > MaxPhase {
			break
		}
		end = i
	}
	return ph[:end] + "…"
}

// recordLabel is a record's label, its action, path and source quoted as
// log quotes them (state.TermSafe): a remote writes them, and a page
// written to a terminal (timeline without -o) must not carry its escapes
// there.
func recordLabel(en state.Entry, rejected bool) string {
	l := fmt.Sprintf("%s %s at %s (%s)", state.TermSafe(string(en.Action)), state.ShownPath(en.Path), stamp(en.Time), state.TermSafe(string(en.Source)))
	if rejected {
		l = "rejected " + l
	}
	return l
}

// leftOut is the detail of an event past the page's diffs: the command
// that prints its diff (its version, for a rejected one or a first). A
// path, which a remote may name, is one shell word in every command the
// page gives to copy (state.ShellWord), so a copy runs nothing else.
func leftOut(en state.Entry, rejected bool) string {
	if rejected || en.Parent == "" {
		return fmt.Sprintf("diff left out of this page; see the version with: strata show %s --rev %s\n", state.ShellWord(en.Path), en.Commit)
	}
	return fmt.Sprintf("diff left out of this page; see it with: strata diff %s --from %s --to %s\n", state.ShellWord(en.Path), en.Parent, en.Commit)
}

// cut bounds a diff to MaxDiff bytes (at a line end), saying how to see it all.
func cut(d, commit, p string) string {
	if d == "" {
		return "(no change in content)\n"
	}
	if len(d) <= MaxDiff {
		return d
	}
	d = d[:MaxDiff]
	if i := strings.LastIndexByte(d, '\n'); i > 0 {
		d = d[:i+1]
	}
	return d + fmt.Sprintf("... diff cut at %d bytes; see all of it with: strata show %s --rev %s\n", MaxDiff, state.ShellWord(p), commit)
}
