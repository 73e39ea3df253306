package phase

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/strata-dev/strata/state"
)

// Finding categories of a Phase Outcome.
const (
	InScopeBlocking   = "in-scope-blocking"
	InScopeDeferrable = "in-scope-deferrable"
	OutOfScope        = "out-of-scope"
	PreExisting       = "pre-existing"
)

// Decision is one pending decision of a Phase Outcome.
type Decision struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"`
	Question    string   `json:"question"`
	Options     []string `json:"options"`
	Recommended string   `json:"recommended"`
	// Blocking is the decision's blocking flag; a decision without one is
	// blocking (the safe default of docs/contract.md §3).
	Blocking bool   `json:"blocking"`
	Outcome  string `json:"outcome"` // the Phase Outcome file holding it
	Feature  string `json:"feature"`
	Index    int    `json:"-"` // its index in pending_decisions
}

// Folder is the name of the folder under PhaseOutcomes/ that holds the
// decision's Phase Outcome, which `strata decide --feature` takes: the
// outcome's own `feature:` may differ from it (a dated folder,
// login-2026, holding feature: login).
func (d Decision) Folder() string { return path.Base(path.Dir(d.Outcome)) }

// Finding is one finding of a Phase Outcome.
type Finding struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	// Category is proposed_category; a finding without one is
	// in-scope-blocking (the safe default of docs/contract.md §3).
	Category string `json:"category"`
}

// Outcome is a Phase Outcome file.
type Outcome struct {
	Path      string
	Number    int // the NNN of its name; -1 when it has none
	Phase     string
	Feature   string
	Findings  []Finding
	Decisions []Decision
}

// Resolution is a decision-resolution file.
type Resolution struct {
	Path     string `json:"path"`
	Number   int    `json:"-"` // the NNN of its name; -1 when it has none
	Resolves string `json:"resolves"`
	Outcome  string `json:"outcome"` // as written in the file
	Choice   string `json:"choice"`
	By       string `json:"by"`
	At       string `json:"at"`
	Note     string `json:"note,omitempty"`
	// Recorded says the file is on the state ref: a recorded resolution is
	// final, so it comes before any unrecorded one of the same decision.
	Recorded bool `json:"-"`
}

var numberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+)-`) })

// Number returns the NNN prefix of a handoff file name, -1 when it has none.
func Number(name string) int {
	m := numberRE().FindStringSubmatch(path.Base(name))
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

var resolutionNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+-resolution-(.+)\.yaml$`) })

// ResolvedID returns the decision id named by a resolution file name
// ("004-resolution-D-001.yaml" → "D-001"), "" when the name has none.
func ResolvedID(name string) string {
	m := resolutionNameRE().FindStringSubmatch(path.Base(name))
	if m == nil {
		return ""
	}
	return m[1]
}

// ResolutionName is the name of the n-th file of a feature folder resolving
// decision id: "004-resolution-D-001.yaml".
func ResolutionName(n int, id string) string {
	return fmt.Sprintf("%03d-resolution-%s.yaml", n, id)
}

// OutcomePath returns the repo-relative path an outcome field names: as
// written, or, when it has no "/", the file of that name beside the
// resolution.
func OutcomePath(resolution, outcome string) string {
	if outcome == "" || strings.Contains(outcome, "/") {
		return path.Clean(outcome)
	}
	return path.Join(path.Dir(resolution), outcome)
}

// ParseOutcome reads a Phase Outcome from its decoded document, applying
// the safe defaults. Values of the wrong type are left out; the schema
// reports them.
func ParseOutcome(p string, doc any) Outcome {
	obj, _ := doc.(map[string]any)
	o := Outcome{Path: p, Number: Number(p), Feature: str(obj["feature"])}
	switch v := obj["phase"].(type) {
	case string:
		o.Phase = v
	case fmt.Stringer:
		o.Phase = v.String()
	}
	if o.Feature == "" {
		o.Feature = path.Base(path.Dir(p))
	}
	findings, _ := obj["findings"].([]any)
	for _, f := range findings {
		m, _ := f.(map[string]any)
		fd := Finding{Type: str(m["type"]), Title: str(m["title"]), Category: str(m["proposed_category"])}
		if fd.Category == "" {
			fd.Category = InScopeBlocking
		}
		o.Findings = append(o.Findings, fd)
	}
	decisions, _ := obj["pending_decisions"].([]any)
	for i, d := range decisions {
		m, _ := d.(map[string]any)
		dc := Decision{ID: str(m["id"]), Type: str(m["type"]), Question: str(m["question"]),
			Recommended: str(m["recommended"]), Blocking: true, Outcome: p, Feature: o.Feature, Index: i, Options: []string{}}
		if b, ok := m["blocking"].(bool); ok {
			dc.Blocking = b
		}
		opts, _ := m["options"].([]any)
		for _, op := range opts {
			if s, ok := op.(string); ok {
				dc.Options = append(dc.Options, s)
			}
		}
		o.Decisions = append(o.Decisions, dc)
	}
	return o
}

// ParseResolution reads a decision resolution from its decoded document.
func ParseResolution(p string, doc any) Resolution {
	obj, _ := doc.(map[string]any)
	return Resolution{Path: p, Number: Number(p), Resolves: str(obj["resolves"]), Outcome: str(obj["outcome"]),
		Choice: str(obj["choice"]), By: str(obj["by"]), At: str(obj["at"]), Note: str(obj["note"])}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// InScopeBlocking counts the findings that are in-scope-blocking (those
// without a category included).
func (o Outcome) InScopeBlocking() int {
	n := 0
	for _, f := range o.Findings {
		if f.Category == InScopeBlocking {
			n++
		}
	}
	return n
}

// Folder is one feature folder of Phase Outcomes and their resolutions.
type Folder struct {
	Dir         string
	Feature     string
	Outcomes    []Outcome    // by number, then path
	Resolutions []Resolution // first first: see Before
	Numbers     []int        // the NNN of every handoff file in the folder, valid or not
}

// Sort puts outcomes in file order and resolutions in precedence order.
func (f *Folder) Sort() {
	sort.Slice(f.Outcomes, func(i, j int) bool {
		a, b := f.Outcomes[i], f.Outcomes[j]
		if a.Number != b.Number {
			return a.Number < b.Number
		}
		return a.Path < b.Path
	})
	sort.Slice(f.Resolutions, func(i, j int) bool { return Before(f.Resolutions[i], f.Resolutions[j]) })
}

// Before reports whether resolution a takes precedence over b: a recorded
// resolution before an unrecorded one, then by number, then by path.
func Before(a, b Resolution) bool {
	if a.Recorded != b.Recorded {
		return a.Recorded
	}
	if a.Number != b.Number {
		return a.Number < b.Number
	}
	return a.Path < b.Path
}

// NextNumber is the number of the next handoff file: the highest in the
// folder plus one (1 in an empty folder).
func (f Folder) NextNumber() int {
	n := 0
	for _, x := range f.Numbers {
		n = max(n, x)
	}
	return n + 1
}

// Decisions returns every decision with this id, in file order.
func (f Folder) Decisions(id string) []Decision {
	var out []Decision
	for _, o := range f.Outcomes {
		for _, d := range o.Decisions {
			if d.ID == id {
				out = append(out, d)
			}
		}
	}
	return out
}

// IDs lists the decision ids of the folder, each once, in file order.
func (f Folder) IDs() []string {
	var out []string
	for _, o := range f.Outcomes {
		for _, d := range o.Decisions {
			if !slices.Contains(out, d.ID) {
				out = append(out, d.ID)
			}
		}
	}
	return out
}

// ResolutionOf returns the resolution that counts for decision d: the first
// (by Before) whose resolves and outcome name it.
func (f Folder) ResolutionOf(d Decision) (Resolution, bool) {
	for _, r := range f.Resolutions {
		if r.Resolves == d.ID && OutcomePath(r.Path, r.Outcome) == d.Outcome {
			return r, true
		}
	}
	return Resolution{}, false
}

// Pending lists the decisions without a resolution, in file order.
func (f Folder) Pending() []Decision {
	var out []Decision
	for _, o := range f.Outcomes {
		for _, d := range o.Decisions {
			if _, done := f.ResolutionOf(d); !done {
				out = append(out, d)
			}
		}
	}
	return out
}

// InScopeBlocking counts the in-scope-blocking findings of the folder.
func (f Folder) InScopeBlocking() int {
	n := 0
	for _, o := range f.Outcomes {
		n += o.InScopeBlocking()
	}
	return n
}

// CheckResolution applies the cross-file rules of docs/contract.md §3 to resolution r:
// its file name names the decision it resolves; the decision is in the
// Phase Outcome it names (outcome, nil when that file is not a readable,
// valid Phase Outcome — why is then in missing); its choice is one of the
// decision's options; and no other resolution of the same decision comes
// before it (others may include r itself). Problems carry JSON Pointers
// into r and no positions.
func CheckResolution(r Resolution, outcome *Outcome, missing string, others []Resolution) state.Problems {
	var ps state.Problems
	at := func(ptr, msg string) { ps = append(ps, state.Problem{Path: r.Path, Pointer: ptr, Message: msg}) }
	if id := ResolvedID(r.Path); id != "" && id != r.Resolves {
		at("/resolves", fmt.Sprintf("value must be %q, the decision named by the file name, got %q", id, r.Resolves))
	}
	if outcome == nil {
		at("/outcome", missing)
		return ps
	}
	var d *Decision
	for i := range outcome.Decisions {
		if outcome.Decisions[i].ID == r.Resolves {
			d = &outcome.Decisions[i]
			break
		}
	}
	if d == nil {
		at("/resolves", fmt.Sprintf("decision %q is not a pending decision of %s%s", r.Resolves, outcome.Path, known(outcome)))
		return ps
	}
	if !slices.Contains(d.Options, r.Choice) {
		at("/choice", fmt.Sprintf("value must be one of the options of %s %s, got %q", d.ID, Quoted(d.Options), r.Choice))
	}
	target := OutcomePath(r.Path, r.Outcome)
	for _, o := range others {
		if o.Path == r.Path || o.Resolves != r.Resolves || OutcomePath(o.Path, o.Outcome) != target || !Before(o, r) {
			continue
		}
		at("/resolves", fmt.Sprintf("decision %s is already resolved by %s; a decision is resolved once", r.Resolves, o.Path))
		break
	}
	return ps
}

func known(o *Outcome) string {
	ids := make([]string, 0, len(o.Decisions))
	for _, d := range o.Decisions {
		ids = append(ids, d.ID)
	}
	if len(ids) == 0 {
		return " (it has none)"
	}
	return " (its decisions: " + strings.Join(ids, ", ") + ")"
}

// Quoted lists values as "a", "b", "c".
func Quoted(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// YAML returns the resolution as a YAML document. Every value is a
// double-quoted scalar whose escapes YAML and JSON share, with line breaks
// and other characters YAML treats specially escaped, so any string round
// trips.
func (r Resolution) YAML() []byte {
	var b strings.Builder
	field := func(k, v string) { b.WriteString(k + ": " + quoteYAML(v) + "\n") }
	field("resolves", r.Resolves)
	field("outcome", r.Outcome)
	field("choice", r.Choice)
	field("by", r.By)
	field("at", r.At)
	if r.Note != "" {
		field("note", r.Note)
	}
	return []byte(b.String())
}

// quoteYAML writes s as a YAML double-quoted scalar. Only printable ASCII
// other than '"' and '\' and printable non-ASCII runes outside YAML's line
// breaks are written as they are; everything else is a \uXXXX escape
// (\UXXXXXXXX past U+FFFF, where YAML has no surrogate pairs). Printable is
// state.PrintableRune, the rule of all strata's output: a control (C0, DEL,
// C1), U+FFFD and a format character (a bidi control such as U+202E, a zero
// width, the byte order mark) are escaped, so cat and git diff show the
// file as it reads (attack35b L3). Invalid UTF-8 becomes U+FFFD.
func quoteYAML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteRune(c)
		case c == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		case c < 0xa0 || c == 0x2028 || c == 0x2029 || !state.PrintableRune(c):
			if c > 0xffff {
				fmt.Fprintf(&b, `\U%08X`, c)
			} else {
				fmt.Fprintf(&b, `\u%04X`, c)
			}
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
