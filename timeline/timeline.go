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
	"unicode/utf8"

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
	// DecodeKey names path's version in commit unread: versions of one key
	// decode alike, and size is the version's length. A version over
	// max_size is refused (state.ErrTooLarge).
	DecodeKey(commit, path string) (key string, size int64, err error)
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

// MaxDecodeRead bounds what Build decodes for the phases and decisions:
// each distinct version of a workflow state, Phase Outcome or resolution
// (by its Source.DecodeKey) is decoded once, and once the next one would
// take the versions decoded past MaxDecodeRead bytes, that version and
// every later one of those classes are not read (Unread, from ReadCut
// on): no span, decision or resolution of theirs is on the page. A
// history pushed to a remote can go back and forth between two versions of
// megabytes for a commit each; decoding each one again cost 0.8 s a
// version (attack34 H1).
const MaxDecodeRead = 64 << 20

// MaxDecisions is the most decision markers a page draws: the decisions
// that first appear once MaxDecisions are drawn are not (DecisionCut).
// One pushed commit can name one blob of thousands of decisions at
// hundreds of paths for a few bytes each: 200 paths of 2 000 decisions
// made 400 200 events and a 391 MB page (attack34 M1). A marker's detail
// (its question, options and resolution) is cut at MaxDiff, and counts
// against MaxDiffs with the diffs: once that is spent, a marker carries
// the command that prints its Phase Outcome instead.
const MaxDecisions = 10_000

// MaxEvents is the most recorded versions a page shows as events, the
// oldest first: the ones from EventCut on are not on it (EventsLeftOut),
// and `--since EventCut` gives a page that starts there. Every other bound
// leaves an event on the page with less in it (its diff, its phase, its
// decision's detail), so a pushed history of 100 000 phase changes made a
// 30 MB page, 400 000 a 210 MB one, growing with what was pushed
// (attack34c): now at most MaxEvents events and MaxDecisions markers.
const MaxEvents = 50_000

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
	Home     bool      // the home ref's events are included (Options.Home)
	// LeftOut counts the events past the page's diffs (MaxDiffs,
	// MaxDiffEvents, MaxDiffRead), the first of them at Cut: `--since Cut` gives a page
	// that starts there.
	LeftOut int
	Cut     time.Time
	// Unread counts the versions of workflow states, Phase Outcomes and
	// resolutions past MaxDecodeRead, the first of them at ReadCut: their
	// phases and decisions are not on the page.
	Unread  int
	ReadCut time.Time
	// DecisionCut is where the first decision past MaxDecisions appeared
	// (zero: every decision is drawn); DetailsLeftOut counts the markers
	// whose detail did not fit in MaxDiffs.
	DecisionCut    time.Time
	DetailsLeftOut int
	// EventsLeftOut counts the recorded versions past MaxEvents, the first
	// of them at EventCut: not on the page at all.
	EventsLeftOut int
	EventCut      time.Time
}

// meaning is what the page takes from one decoded version: Build keeps it
// by the version's DecodeKey (and class), so that a version held by many
// commits or paths is read and decoded once, and keeps no more of it.
type meaning struct {
	ok        bool             // the version is one well-formed document
	phase     string           // a workflow state's phase
	decisions []phase.Decision // a Phase Outcome's, read without its path
	byID      map[string]int   // decisions by ID: the last of equal IDs
	res       phase.Resolution // a resolution's, read without its path
}

// decoder decodes versions for Build, each key once, within MaxDecodeRead.
type decoder struct {
	src  Source
	read int64
	seen map[[2]string]*meaning
}

// of is what it.Path's version in it.Commit says; false once
// MaxDecodeRead is spent.
func (c *decoder) of(it state.Entry) (*meaning, bool) {
	key, size, err := c.src.DecodeKey(it.Commit, it.Path)
	if err != nil {
		return &meaning{}, true // none, or over max_size: nothing to read
	}
	k := [2]string{key, string(it.Class)}
	if m, ok := c.seen[k]; ok {
		return m, true
	}
	if c.read+size > MaxDecodeRead {
		return nil, false
	}
	c.read += size
	m := &meaning{}
	c.seen[k] = m
	docs, err := c.src.Decode(it.Commit, it.Path)
	if err != nil || len(docs) != 1 {
		return m, true
	}
	m.ok = true
	switch it.Class {
	case state.ClassWorkflowState:
		if o, ok := docs[0].(map[string]any); ok {
			ph, _ := o["phase"].(string)
			m.phase = strings.Clone(ph) // not a view of the whole version's text
		}
	case state.ClassPhaseOutcome:
		m.decisions = phase.ParseOutcome("", docs[0]).Decisions
		m.byID = make(map[string]int, len(m.decisions))
		for i, d := range m.decisions {
			d.ID, d.Question, d.Recommended = strings.Clone(d.ID), strings.Clone(d.Question), strings.Clone(d.Recommended)
			for j := range d.Options {
				d.Options[j] = strings.Clone(d.Options[j])
			}
			m.decisions[i] = d
			m.byID[d.ID] = i
		}
	case state.ClassDecisionResolution:
		r := phase.ParseResolution("", docs[0])
		m.res = phase.Resolution{Resolves: strings.Clone(r.Resolves), Outcome: strings.Clone(r.Outcome), Choice: strings.Clone(r.Choice),
			By: strings.Clone(r.By), At: strings.Clone(r.At), Note: strings.Clone(r.Note)}
	}
	return m, true
}

// Options say what Build reads.
type Options struct {
	Since time.Time // zero: the whole history
	// Home includes the home ref's events: the auto-memory file
	// (~/.claude/projects/<key>/memory/MEMORY.md), local to this machine
	// and never pushed. A page is meant to be mailed or archived: without
	// Home, none of that file's content or path is in it.
	Home bool
}

// Build reads the history at or after o.Since (zero: all of it).
func Build(src Source, o Options) (*Timeline, error) {
	since := o.Since
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
		if !kept[i].Home || o.Home {
			items = append(items, item{Entry: kept[i]})
		}
	}
	for i := len(rejected) - 1; i >= 0; i-- {
		if !rejected[i].Home || o.Home {
			items = append(items, item{Entry: rejected[i], rejected: true})
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Time.Before(items[j].Time) })

	t := &Timeline{Since: since, Home: o.Home}
	if len(items) > MaxEvents {
		t.EventsLeftOut, t.EventCut = len(items)-MaxEvents, items[MaxEvents].Time
		items = items[:MaxEvents]
	}
	sessions := map[string]bool{}
	last := map[string][]byte{} // path -> the state ref's version before the current item
	known := map[string]bool{}
	merges := map[string][]engine.MergeDecision{}
	dec := &decoder{src: src, seen: map[[2]string]*meaning{}}
	outcomes := map[string]*meaning{} // path -> latest version
	listed := map[outcomeVersion]bool{}
	decided := map[[2]string]phase.Resolution{}
	decisionAt := map[[2]string]seen{} // path, ID -> where it first appeared
	var order [][2]string              // decisionAt's keys, in the order they appeared
	latest := map[string]string{}      // outcome path -> the commit of its latest version
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
				// as log says each kind of decision (printMergeDecisions):
				// a merge of both sides' edits, or both kept, has no
				// winner or loser to name (attack35e L1: "won, losing
				// side (… --rev '')" for every MEMORY.md merge)
				switch {
				case d.Kept != "":
					e.Label += "; kept local: " + state.TermSafe(d.Kept)
				case d.Merged && d.Dropped != "":
					e.Label += "; merged: " + engine.MergedExcept + state.TermSafe(d.Dropped)
				case d.Merged:
					e.Label += "; merged: both sides' edits kept"
				case d.KeptBoth != "":
					e.Label += "; kept both: the version recorded later is now " + state.TermSafe(d.KeptBoth)
				default:
					e.Label += fmt.Sprintf("; %s won, losing side %s (strata restore %s --rev %s)",
						state.TermSafe(state.ShortID(d.Winner)), state.TermSafe(state.ShortID(d.Loser)), state.ShellWord(d.Path), state.ShellWord(d.Loser))
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

		// What the new version says about phases and decisions: read here
		// also past the page's diffs, where cur is not, each distinct
		// version once (decoder), until MaxDecodeRead.
		if it.Class != state.ClassWorkflowState && it.Class != state.ClassPhaseOutcome && it.Class != state.ClassDecisionResolution {
			continue
		}
		if t.Unread > 0 {
			t.Unread++
			continue
		}
		m := &meaning{}
		if it.Action != state.ActionDelete {
			var ok bool
			if m, ok = dec.of(it.Entry); !ok {
				t.Unread, t.ReadCut = 1, it.Time
				if n := len(wf); n > 0 && wf[n-1].End.IsZero() {
					wf[n-1].End = it.Time
				}
				continue
			}
		}
		switch it.Class {
		case state.ClassWorkflowState:
			ph := m.phase
			if n := len(wf); n > 0 && wf[n-1].End.IsZero() {
				if inPhase == ph {
					continue
				}
				wf[n-1].End = it.Time
			}
			inPhase = ph
			if ph != "" {
				wf = append(wf, Span{Label: phaseLabel(ph), Start: it.Time})
			}
		case state.ClassPhaseOutcome:
			if !m.ok {
				continue
			}
			outcomes[it.Path], latest[it.Path] = m, it.Commit
			// A version this path held before adds no decision: look at
			// each version's decisions once a path, until MaxDecisions.
			if ov := (outcomeVersion{it.Path, m}); !listed[ov] && t.DecisionCut.IsZero() {
				listed[ov] = true
				for _, d := range m.decisions {
					k := [2]string{it.Path, d.ID}
					if _, ok := decisionAt[k]; ok {
						continue
					}
					if len(order) == MaxDecisions {
						t.DecisionCut = it.Time
						break
					}
					decisionAt[k] = seen{at: it.Time, commit: it.Commit, d: d}
					order = append(order, k)
				}
			}
		case state.ClassDecisionResolution:
			if !m.ok {
				continue
			}
			r := m.res
			r.Path, r.Number = it.Path, phase.Number(it.Path)
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
	// outcome's latest version says of it (else the version it appeared
	// in): found by ID through the index of that version's decisions
	// (meaning.byID), made once, so that an outcome of D decisions costs
	// D, not D² (attack34 H2). Its detail counts against MaxDiffs, oldest
	// first, after the diffs.
	for _, k := range order {
		first := decisionAt[k]
		d, commit := first.d, first.commit
		if o := outcomes[k[0]]; o != nil {
			if i, ok := o.byID[k[1]]; ok {
				d, commit = o.decisions[i], latest[k[0]]
			}
		}
		e := Event{Lane: LaneDecisions, Time: first.at, Path: k[0], Commit: commit, Kind: KindPending}
		r, resolved := decided[k]
		if resolved {
			e.Kind = KindResolved
			e.Label = fmt.Sprintf("decision %s resolved: %s (%s)", state.TermSafe(clip(d.ID)), state.TermSafe(clip(r.Choice)), state.TermSafe(clip(d.Question)))
		} else {
			e.Label = fmt.Sprintf("decision %s pending (%s)", state.TermSafe(clip(d.ID)), state.TermSafe(clip(d.Question)))
		}
		if e.Detail = decisionDetail(d, k[0], commit, r, resolved); spent+len(e.Detail) > MaxDiffs || t.DetailsLeftOut > 0 {
			e.Detail = fmt.Sprintf("decision %s: details left out of this page; see its Phase Outcome with: strata show %s --rev %s (strata decisions lists the pending ones)\n",
				state.TermSafe(clip(d.ID)), state.ShellWord(k[0]), commit)
			t.DetailsLeftOut++
		} else {
			spent += len(e.Detail)
		}
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

// seen is where a decision first appeared: when, in which commit, as what.
type seen struct {
	at     time.Time
	commit string
	d      phase.Decision
}

// decisionDetail is a decision marker's detail: what the decision asks,
// and its resolution when resolved, at most MaxDiff bytes (cut as a diff
// is, naming the version that holds it whole). No field is copied whole
// into it: a question can be megabytes.
func decisionDetail(d phase.Decision, p, commit string, r phase.Resolution, resolved bool) string {
	short := func(s string) string { return s[:min(len(s), MaxDiff+1)] }
	var b strings.Builder
	fmt.Fprintf(&b, "decision %s (%s)\nquestion: %s\noptions: ", short(d.ID), short(p), short(d.Question))
	for i, o := range d.Options {
		if b.Len() > MaxDiff {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(short(o))
	}
	fmt.Fprintf(&b, "\nrecommended: %s\n", short(d.Recommended))
	if !resolved {
		b.WriteString("pending\n")
	} else if b.Len() <= MaxDiff {
		fmt.Fprintf(&b, "resolved: %s\nby: %s\nat: %s\nin: %s\n", short(r.Choice), short(r.By), short(r.At), short(r.Path))
		if r.Note != "" {
			fmt.Fprintf(&b, "note: %s\n", short(r.Note))
		}
	}
	if b.Len() <= MaxDiff {
		return b.String()
	}
	return cutAt(b.String(), false) + fmt.Sprintf("... cut at %d bytes; see all of it with: strata show %s --rev %s\n", MaxDiff, state.ShellWord(p), commit)
}

// outcomeVersion is a version of a Phase Outcome at a path.
type outcomeVersion struct {
	path string
	m    *meaning
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
		return "session " + state.TermSafe(path.Base(path.Dir(p)))
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

// phaseLabel is a span's label: its phase, cut after MaxPhase bytes and
// quoted as recordLabel quotes (state.TermSafe): a remote writes it, and
// the page may go to a terminal.
func phaseLabel(ph string) string { return state.TermSafe(clip(ph)) }

// clip is s for a label: cut after MaxPhase bytes (at a character's
// start), always a copy: a decoded string is a view of the whole
// version's text, which the label would keep.
func clip(s string) string {
	if len(s) <= MaxPhase {
		return strings.Clone(s)
	}
	end := 0
	for i := range s {
		if i > MaxPhase {
			break
		}
		end = i
	}
	return s[:end] + "…"
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

// cutAt is d's first MaxDiff bytes, up to the end of a line when one
// ends in them and atLine, else of a character, ending in a newline.
func cutAt(d string, atLine bool) string {
	d = d[:min(len(d), MaxDiff)]
	if i := strings.LastIndexByte(d, '\n'); i > 0 && atLine {
		return d[:i+1]
	}
	for i := 1; i < utf8.UTFMax && len(d) > 0; i++ { // a character cut in two
		if r, n := utf8.DecodeLastRuneInString(d); r != utf8.RuneError || n != 1 {
			break
		}
		d = d[:len(d)-1]
	}
	return d + "\n"
}

// cut bounds a diff to MaxDiff bytes (at a line end), saying how to see it all.
func cut(d, commit, p string) string {
	if d == "" {
		return "(no change in content)\n"
	}
	if len(d) <= MaxDiff {
		return d
	}
	return cutAt(d, true) + fmt.Sprintf("... diff cut at %d bytes; see all of it with: strata show %s --rev %s\n", MaxDiff, state.ShellWord(p), commit)
}
