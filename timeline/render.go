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
	Lanes          []viewLane
	Ticks          []viewMarker
	Kinds          []string
	Data           template.JS // viewData as JSON (dataJSON)
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
			for _, s := range t.Spans {
				left, right := pos(s.Start), pos(s.End)
				l.Markers = append(l.Markers, viewMarker{Span: true, Kind: "span", Left: pct(left), Width: pct(max(right-left, 0.5)), Text: s.Label,
					Label: fmt.Sprintf("phase %s from %s to %s", s.Label, stamp(s.Start), stamp(s.End)), EventIdx: -1})
			}
			l.Count = len(t.Spans)
		}
		evs := byLane[name]
		l.Count += len(evs)
		if len(evs) > Dense {
			l.Dense = true
			width := 100.0 / Buckets
			var cur []int
			flush := func(b int) {
				if len(cur) == 0 {
					return
				}
				first, last := t.Events[cur[0]].Time, t.Events[cur[len(cur)-1]].Time
				kind := "bucket"
				for _, i := range cur {
					if t.Events[i].Kind == KindRejected {
						kind = "bucket bucket-rejected"
					}
				}
				l.Markers = append(l.Markers, viewMarker{Bucket: true, ID: fmt.Sprintf("b-%d", len(data.Buckets)), Kind: kind,
					Left: pct(float64(b) * width), Width: pct(width), Text: fmt.Sprint(len(cur)),
					Label:    fmt.Sprintf("%d events in %s from %s to %s", len(cur), name, stamp(first), stamp(last)),
					EventIdx: len(data.Buckets)})
				shown := cur
				if len(shown) > MaxInBucket {
					shown = shown[:MaxInBucket]
				}
				data.Buckets = append(data.Buckets, append([]int(nil), shown...))
				cur = nil
			}
			prev := -1
			for _, i := range evs {
				b := min(int(pos(t.Events[i].Time)/width), Buckets-1)
				if b != prev {
					flush(prev)
					prev = b
				}
				cur = append(cur, i)
			}
			flush(prev)
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

// dataJSON is the page's data block: JSON as encoding/json writes it for
// HTML (<, > and & escaped, U+2028 and U+2029 too), with every C1 control
// (U+0080-U+009F) and bidi control (U+202A-U+202E, U+2066-U+2069) also
// written as a \u escape: a diff holds recorded content as it is, and the
// page may go to a terminal, which reads a C1 character as an escape.
// (Outside strings, JSON is ASCII: no escape is written there.)
func dataJSON(d viewData) (template.JS, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(raw))
	for _, r := range string(raw) {
		if r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return template.JS(b.String()), nil
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
