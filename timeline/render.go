package timeline

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/state"
)

// Dense is the number of events above which a lane is drawn as Buckets
// count markers instead of one marker per event.
const (
	Dense   = 200
	Buckets = 50
)

// MaxInBucket is the most events a bucket lists when opened.
const MaxInBucket = 500

//go:embed page.html.tmpl
var pageSource string

var page = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageSource)) })

//go:embed page.js
var scriptSource string

// script is the page's one script as a browser reads it, and so hashes it:
// the HTML parser reads a CR LF or a lone CR (a checkout with
// core.autocrlf) as LF.
var script = sync.OnceValue(func() string {
	return strings.ReplaceAll(strings.ReplaceAll(scriptSource, "\r\n", "\n"), "\r", "\n")
})

// Policy is the page's Content-Security-Policy: nothing loaded from
// anywhere, the page's own inline CSS, and of scripts only the page's one,
// named by the SHA-256 of its text, so that a script or an event handler an
// escaping mistake let into the page would not run. (The page's data is a
// JSON <script> block, which is never run and needs no source.) A server
// adds frame-ancestors, which a <meta> policy cannot set.
func Policy() string {
	sum := sha256.Sum256([]byte(script()))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src data:"
}

type viewMarker struct {
	ID       string
	Left     string // CSS percentage
	Width    string // spans and buckets
	Kind     string
	Label    string
	Text     string // visible text: a bucket's count, a span's phase
	Tab      int    // 0 for the first marker of a lane (roving tabindex), else -1
	Bucket   bool
	Span     bool
	EventIdx int
}

type viewLane struct {
	ID      string
	Name    string
	Count   int
	Dense   bool
	Markers []viewMarker
}

type viewEvent struct {
	Label  string `json:"l"`
	Detail string `json:"d"`
	Kind   string `json:"k"`
}

type viewData struct {
	Events  []viewEvent `json:"events"`
	Buckets [][]int     `json:"buckets"` // bucket number -> event numbers
}

type view struct {
	PolicyMeta template.HTML // the <meta> element of Policy
	Script     template.JS   // the page's script, whose hash Policy names
	Title      string
	From, To   string
	Since      string
	Home       bool // the home ref's events are in the page
	EventCount int
	LeftOut    int    // events past the page's diffs, from Cut on
	Cut        string // RFC 3339, to the nanosecond when it has one: a --since that starts there
	Budget     string // what a page embeds at most
	Unread     int    // versions whose phases and decisions are not read, from ReadCut on
	ReadCut    string
	ReadBudget string // what a page decodes at most
	// DecisionCut: where the first decision not drawn appeared (past
	// MaxDecisions); DetailsLeftOut: decision markers without their detail
	DecisionCut    string
	MaxDecisions   string
	DetailsLeftOut int
	DetailBudget   string
	// EventsLeftOut: recorded versions past MaxEvents, from EventCut on
	EventsLeftOut int
	EventCut      string
	MaxEvents     string
	Lanes         []viewLane
	Ticks         []viewMarker
	Kinds         []string
	Data          template.JS // viewData as JSON (dataJSON)
}

// Render writes t as one self-contained HTML page: inline CSS and script,
// every diff embedded, nothing fetched when it is viewed.
func Render(w io.Writer, t *Timeline) error {
	// Policy is built of fixed text and base64 (no quote, no ampersand):
	// it is written into the attribute as it is, readable.
	v := view{PolicyMeta: template.HTML(`<meta http-equiv="Content-Security-Policy" content="` + Policy() + `">`),
		Script: template.JS(script()), Title: "strata timeline", From: stamp(t.From), To: stamp(t.To), EventCount: len(t.Events),
		Kinds: []string{KindAdd, KindUpdate, KindDelete, KindRejected, KindExpire, KindSync, KindRestore, KindResolve, KindPending, KindResolved}}
	if !t.Since.IsZero() {
		v.Since = stamp(t.Since)
	}
	v.Home = t.Home
	if t.LeftOut > 0 {
		v.LeftOut, v.Cut = t.LeftOut, CutStamp(t.Cut)
		v.Budget = fmt.Sprintf("%s diffs, %d MiB in all, from %d MiB of versions read", grouped(MaxDiffEvents), MaxDiffs>>20, MaxDiffRead>>20)
	}
	if t.Unread > 0 {
		v.Unread, v.ReadCut = t.Unread, CutStamp(t.ReadCut)
		v.ReadBudget = fmt.Sprintf("%d MiB", MaxDecodeRead>>20)
	}
	if !t.DecisionCut.IsZero() {
		v.DecisionCut, v.MaxDecisions = CutStamp(t.DecisionCut), grouped(MaxDecisions)
	}
	v.DetailsLeftOut, v.DetailBudget = t.DetailsLeftOut, fmt.Sprintf("%d MiB", MaxDiffs>>20)
	if t.EventsLeftOut > 0 {
		v.EventsLeftOut, v.EventCut, v.MaxEvents = t.EventsLeftOut, CutStamp(t.EventCut), grouped(MaxEvents)
	}
	if len(t.Events) == 0 {
		v.From, v.To = "", ""
	}
	span := t.To.Sub(t.From)
	pos := func(at time.Time) float64 {
		if span <= 0 {
			return 50
		}
		return float64(at.Sub(t.From)) / float64(span) * 100
	}
	pct := func(f float64) string { return fmt.Sprintf("%.3f%%", f) }
	for i := 0; i <= 4 && span > 0; i++ {
		at := t.From.Add(time.Duration(int64(span) / 4 * int64(i)))
		v.Ticks = append(v.Ticks, viewMarker{Left: pct(float64(i) * 25), Text: stamp(at)})
	}
	var data viewData
	byLane := map[string][]int{}
	for i, e := range t.Events {
		data.Events = append(data.Events, viewEvent{Label: e.Label, Detail: e.Detail, Kind: e.Kind})
		byLane[e.Lane] = append(byLane[e.Lane], i)
	}
	for n, name := range t.Lanes {
		l := viewLane{ID: fmt.Sprintf("lane-%d", n), Name: name}
		if name == LanePhases {
			l.Count = len(t.Spans)
			if len(t.Spans) > Dense {
				// Drawn as count markers, as a lane of events is: a history
				// pushed to a remote can change phase in every one of any
				// number of commits, a span each (attack34c). A bucket
				// lists its first MaxInBucket spans, added to the data
				// block after the events (their numbers, #ev-N, stay).
				l.Dense = true
				bucketed(&l, &data, name, "phases", len(t.Spans), pos,
					func(j int) time.Time { return t.Spans[j].Start }, func(int) bool { return false },
					func(j int) int {
						s := t.Spans[j]
						data.Events = append(data.Events, viewEvent{Label: spanLabel(s), Kind: "span"})
						return len(data.Events) - 1
					})
			} else {
				for _, s := range t.Spans {
					left, right := pos(s.Start), pos(s.End)
					l.Markers = append(l.Markers, viewMarker{Span: true, Kind: "span", Left: pct(left), Width: pct(max(right-left, 0.5)), Text: s.Label,
						Label: spanLabel(s), EventIdx: -1})
				}
			}
		}
		evs := byLane[name]
		l.Count += len(evs)
		if len(evs) > Dense {
			l.Dense = true
			bucketed(&l, &data, name, "events", len(evs), pos,
				func(j int) time.Time { return t.Events[evs[j]].Time }, func(j int) bool { return t.Events[evs[j]].Kind == KindRejected },
				func(j int) int { return evs[j] })
		} else {
			for _, i := range evs {
				e := t.Events[i]
				l.Markers = append(l.Markers, viewMarker{ID: fmt.Sprintf("ev-%d", i), Kind: e.Kind, Left: pct(pos(e.Time)), Label: e.Label, EventIdx: i})
			}
		}
		for j := range l.Markers {
			l.Markers[j].Tab = -1
		}
		if len(l.Markers) > 0 {
			l.Markers[0].Tab = 0
		}
		v.Lanes = append(v.Lanes, l)
	}
	if data.Events == nil {
		data.Events = []viewEvent{}
	}
	if data.Buckets == nil {
		data.Buckets = [][]int{}
	}
	js, err := dataJSON(data)
	if err != nil {
		return err
	}
	v.Data = js
	return page().Execute(w, v)
}

// spanLabel is a span's label, as a screen reader reads it.
func spanLabel(s Span) string {
	return fmt.Sprintf("phase %s from %s to %s", s.Label, stamp(s.Start), stamp(s.End))
}

// bucketed draws a dense lane's n items (oldest first, at(j) the time of
// the j-th) as at most Buckets count markers, each the items whose time
// falls in its 1/Buckets of the page; opened, a bucket lists its first
// MaxInBucket items, their numbers in the data block given by entry (called
// for those only, in order). So the lane costs the page at most Buckets
// markers and Buckets*MaxInBucket listed items, whatever n is.
func bucketed(l *viewLane, data *viewData, name, noun string, n int, pos func(time.Time) float64,
	at func(int) time.Time, rejected func(int) bool, entry func(int) int) {
	width := 100.0 / Buckets
	pct := func(f float64) string { return fmt.Sprintf("%.3f%%", f) }
	flush := func(b, from, to int) { // items [from, to) in bucket b
		if to == from {
			return
		}
		kind := "bucket"
		for j := from; j < to; j++ {
			if rejected(j) {
				kind = "bucket bucket-rejected"
				break
			}
		}
		l.Markers = append(l.Markers, viewMarker{Bucket: true, ID: fmt.Sprintf("b-%d", len(data.Buckets)), Kind: kind,
			Left: pct(float64(b) * width), Width: pct(width), Text: fmt.Sprint(to - from),
			Label:    fmt.Sprintf("%d %s in %s from %s to %s", to-from, noun, name, stamp(at(from)), stamp(at(to-1))),
			EventIdx: len(data.Buckets)})
		listed := make([]int, 0, min(to-from, MaxInBucket))
		for j := from; j < to && len(listed) < MaxInBucket; j++ {
			listed = append(listed, entry(j))
		}
		data.Buckets = append(data.Buckets, listed)
	}
	prev, from := -1, 0
	for j := 0; j < n; j++ {
		b := min(int(pos(at(j))/width), Buckets-1)
		if b != prev {
			flush(prev, from, j)
			prev, from = b, j
		}
	}
	flush(prev, from, n)
}

// dataJSON is the page's data block: JSON as encoding/json writes it for
// HTML (<, > and & escaped, U+2028 and U+2029 too), with every character
// a terminal acts on written as a \u escape as in every JSON document
// strata prints (state.JSONSafe: C1 controls, bidi controls, zero widths):
// a diff holds recorded content as it is, and the page may go to a
// terminal, which reads a C1 character as an escape.
func dataJSON(d viewData) (template.JS, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	return template.JS(state.JSONSafe(raw)), nil
}

// CutStamp writes a page's Cut for `--since`: RFC 3339, with the
// nanoseconds when it has some, so the next page starts at that event.
func CutStamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// grouped writes n with its thousands apart, as the docs do: 10 000.
func grouped(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
