package phase_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/validate"
)

const outcomeYAML = `phase: plan
feature: auth
produced: []
findings:
  - {type: risk, title: a, reasoning: r, proposed_category: out-of-scope}
  - {type: risk, title: b, reasoning: r}
  - {type: debt, title: c, reasoning: r, proposed_category: in-scope-blocking}
pending_decisions:
  - {id: D-001, type: design, question: q1, options: [rotate, keep], recommended: rotate}
  - {id: D-002, type: design, question: q2, options: [yes, no], recommended: no, blocking: false}
  - {id: D-003, type: design, question: q3, options: [a], recommended: a, blocking: true}
`

func parseOutcome(t *testing.T, path, text string) phase.Outcome {
	t.Helper()
	doc, ps := validate.DecodeYAML(path, []byte(text))
	if ps != nil {
		t.Fatal(ps)
	}
	return phase.ParseOutcome(path, doc)
}

func TestParseOutcomeDefaults(t *testing.T) {
	o := parseOutcome(t, "PhaseOutcomes/auth/001-plan.yaml", outcomeYAML)
	if o.Number != 1 || o.Feature != "auth" || o.Phase != "plan" {
		t.Errorf("outcome: %+v", o)
	}
	blocking := map[string]bool{}
	for _, d := range o.Decisions {
		blocking[d.ID] = d.Blocking
	}
	if want := map[string]bool{"D-001": true, "D-002": false, "D-003": true}; !mapsEqual(blocking, want) {
		t.Errorf("blocking = %v, want %v (a decision without blocking blocks)", blocking, want)
	}
	if got := o.InScopeBlocking(); got != 2 {
		t.Errorf("in-scope-blocking findings = %d, want 2 (a finding without a category counts)", got)
	}
	if o.Findings[1].Category != phase.InScopeBlocking {
		t.Errorf("default category = %q", o.Findings[1].Category)
	}
	if o.Decisions[0].Outcome != o.Path || o.Decisions[1].Index != 1 {
		t.Errorf("decision provenance: %+v", o.Decisions[1])
	}
	// the phase may be a number
	if o := parseOutcome(t, "PhaseOutcomes/auth/002-3.yaml", "phase: 3\n"); o.Phase != "3" {
		t.Errorf("numeric phase = %q", o.Phase)
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestFolder(t *testing.T) {
	o1 := parseOutcome(t, "PhaseOutcomes/auth/001-plan.yaml", outcomeYAML)
	o2 := parseOutcome(t, "PhaseOutcomes/auth/003-implement.yaml", "phase: implement\npending_decisions:\n  - {id: D-001, question: again, options: [x], recommended: x}\n")
	f := phase.Folder{Dir: "PhaseOutcomes/auth", Feature: "auth",
		Outcomes: []phase.Outcome{o2, o1},
		Resolutions: []phase.Resolution{
			{Path: "PhaseOutcomes/auth/004-resolution-D-001.yaml", Number: 4, Resolves: "D-001", Outcome: "PhaseOutcomes/auth/001-plan.yaml", Choice: "keep"},
			{Path: "PhaseOutcomes/auth/002-resolution-D-001.yaml", Number: 2, Resolves: "D-001", Outcome: "001-plan.yaml", Choice: "rotate", Recorded: true},
		},
		Numbers: []int{1, 2, 3, 4, 7},
	}
	f.Sort()
	if f.Outcomes[0].Path != o1.Path {
		t.Errorf("outcomes not in file order")
	}
	r, ok := f.ResolutionOf(o1.Decisions[0])
	if !ok || r.Number != 2 {
		t.Errorf("resolution of D-001 = %+v, want the recorded 002", r)
	}
	var pending []string
	for _, d := range f.Pending() {
		pending = append(pending, d.ID+"@"+filepath.Base(d.Outcome))
	}
	if got := strings.Join(pending, " "); got != "D-002@001-plan.yaml D-003@001-plan.yaml D-001@003-implement.yaml" {
		t.Errorf("pending = %s", got)
	}
	if n := f.NextNumber(); n != 8 {
		t.Errorf("next number = %d, want 8", n)
	}
	if n := (phase.Folder{}).NextNumber(); n != 1 {
		t.Errorf("next number of an empty folder = %d", n)
	}
	if got := strings.Join(f.IDs(), ","); got != "D-001,D-002,D-003" {
		t.Errorf("ids = %s", got)
	}
}

func TestCheckResolution(t *testing.T) {
	o := parseOutcome(t, "PhaseOutcomes/auth/001-plan.yaml", outcomeYAML)
	res := func(name, id, choice string, recorded bool) phase.Resolution {
		return phase.Resolution{Path: "PhaseOutcomes/auth/" + name, Number: phase.Number(name), Resolves: id,
			Outcome: "PhaseOutcomes/auth/001-plan.yaml", Choice: choice, Recorded: recorded}
	}
	first := res("002-resolution-D-001.yaml", "D-001", "rotate", true)
	cases := []struct {
		name    string
		r       phase.Resolution
		outcome *phase.Outcome
		others  []phase.Resolution
		want    string // substring of the joined problems; "" for none
	}{
		{"valid", first, &o, []phase.Resolution{first}, ""},
		{"choice not an option", res("002-resolution-D-001.yaml", "D-001", "maybe", false), &o, nil, `/choice: value must be one of the options of D-001 "rotate", "keep", got "maybe"`},
		{"unknown decision", res("002-resolution-D-009.yaml", "D-009", "x", false), &o, nil, `/resolves: decision "D-009" is not a pending decision of PhaseOutcomes/auth/001-plan.yaml (its decisions: D-001, D-002, D-003)`},
		{"file name disagrees", res("002-resolution-D-002.yaml", "D-001", "keep", false), &o, nil, `/resolves: value must be "D-002", the decision named by the file name`},
		{"missing outcome", first, nil, nil, "/outcome: gone"},
		{"second resolution names the first", res("003-resolution-D-001.yaml", "D-001", "keep", false), &o, []phase.Resolution{first}, "/resolves: decision D-001 is already resolved by PhaseOutcomes/auth/002-resolution-D-001.yaml"},
		{"a recorded one wins over a lower unrecorded number", res("001-resolution-D-001.yaml", "D-001", "keep", false), &o, []phase.Resolution{first}, "already resolved by PhaseOutcomes/auth/002-resolution-D-001.yaml"},
		{"the first itself passes", first, &o, []phase.Resolution{first, res("003-resolution-D-001.yaml", "D-001", "keep", false)}, ""},
		{"other decisions do not count", res("003-resolution-D-002.yaml", "D-002", "yes", false), &o, []phase.Resolution{first}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := phase.CheckResolution(tc.r, tc.outcome, "gone", tc.others)
			got := ps.Error()
			if tc.want == "" && ps != nil || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("problems:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

func TestResolutionYAMLRoundTrip(t *testing.T) {
	for _, note := range []string{"", "plain", `"quoted" and \back\slash`, "two\nlines\r\n", "tab\there", "#not a comment: {x}", "- [a]",
		"café ünïcode 中文 😀", "nel\u0085ls\u2028ps\u2029bom\ufeff", "ctl\x01\x1f\x7f", "bad utf8 \xff", "  spaces  ", "yes", "null", "~", "0x10",
		"bidi \u202egnp.exe\u2066x\u2069", "zero\u200bwidth\u200d", "tag \U000E0041 past U+FFFF", "real \ufffd"} {
		r := phase.Resolution{Resolves: "D-001", Outcome: "PhaseOutcomes/a b/001-plan.yaml", Choice: note + "!", By: "Ann O'Neil", At: "2026-11-22T10:00:00Z", Note: note}
		data := r.YAML()
		doc, ps := validate.DecodeYAML("x.yaml", data)
		if ps != nil {
			t.Fatalf("%q: %v\n%s", note, ps, data)
		}
		got := phase.ParseResolution("x.yaml", doc)
		want := r
		want.Note = strings.ToValidUTF8(note, "\ufffd")
		want.Choice = strings.ToValidUTF8(note, "\ufffd") + "!"
		if got.Note != want.Note || got.Choice != want.Choice || got.By != r.By || got.Outcome != r.Outcome || got.At != r.At {
			t.Errorf("%q: round trip gave %+v\n%s", note, got, data)
		}
	}
}

// The resolution YAML escapes what strata's output escapes (state.TermSafe):
// a bidi control, a zero width or another format character is written as
// its escape, never raw, so cat and git diff show the file in order
// (attack35b L3); printable non-ASCII stays as it is.
func TestResolutionYAMLEscapesFormatCharacters(t *testing.T) {
	r := phase.Resolution{Resolves: "D-001", Outcome: "PhaseOutcomes/a/001-plan.yaml", Choice: "rotate", By: "me\u202e", At: "2026-11-22T10:00:00Z",
		Note: "zw\u200bj\u200d tag\U000E0041 café 😀"}
	got := string(r.YAML())
	for _, want := range []string{"by: \"me\\u202E\"\n", "note: \"zw\\u200Bj\\u200D tag\\U000E0041 café 😀\"\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("YAML lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\u202e\u200b\u200d\U000E0041") {
		t.Errorf("a format character is written raw:\n%q", got)
	}
}

func TestNames(t *testing.T) {
	if got := phase.ResolutionName(4, "D-001"); got != "004-resolution-D-001.yaml" {
		t.Errorf("ResolutionName = %s", got)
	}
	if got := phase.ResolvedID("PhaseOutcomes/f/012-resolution-D-7.yaml"); got != "D-7" {
		t.Errorf("ResolvedID = %q", got)
	}
	for name, want := range map[string]int{"001-plan.yaml": 1, "PhaseOutcomes/f/120-resolution-D-1.yaml": 120, "plan.yaml": -1, "x-001.yaml": -1} {
		if got := phase.Number(name); got != want {
			t.Errorf("Number(%s) = %d, want %d", name, got, want)
		}
	}
	if got := phase.OutcomePath("PhaseOutcomes/f/002-resolution-D-1.yaml", "001-plan.yaml"); got != "PhaseOutcomes/f/001-plan.yaml" {
		t.Errorf("OutcomePath = %s", got)
	}
}

// TestCorpusHandoffs feeds real handoff files, which follow other shapes,
// through the Phase Outcome schema and the parser: each problem is one clean
// line naming the file, and nothing panics.
func TestCorpusHandoffs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus", "handoff-yaml")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("corpus not present: %v", err)
	}
	v, err := validate.New(validate.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		path := "PhaseOutcomes/corpus/" + e.Name()
		ps := v.Validate(path, data, "phase-outcome")
		if !ps.Invalid() {
			t.Errorf("%s: a foreign handoff passed the phase-outcome schema", e.Name())
		}
		for _, p := range ps {
			line := p.Error()
			if strings.ContainsAny(line, "\n\r") || !strings.HasPrefix(line, path+":") || p.Message == "" {
				t.Errorf("%s: problem is not one clean line: %q", e.Name(), line)
			}
		}
		doc, _ := validate.DecodeYAML(path, data)
		o := phase.ParseOutcome(path, doc) // must not panic on any shape
		r := phase.ParseResolution(path, doc)
		phase.CheckResolution(r, &o, "", nil)
		if ps := phase.CheckResolution(r, &o, "", nil); len(ps) == 0 {
			t.Errorf("%s: a foreign document passed as a resolution", e.Name())
		}
	}
}
