package validate

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/state"
)

// Tier is one tier of the phase-output pipeline: its phase number and the
// label used in tier_label and in the file name phase-<NN>-<label>.json.
type Tier struct {
	Phase int
	Label string
}

// Tiers is the canonical tier table of docs/contract.md §3, in phase order. Callers must
// not modify it.
var Tiers = []Tier{
	{1, "query"},
	{2, "strategy"},
	{3, "search"},
	{4, "extraction"},
	{5, "reading"},
	{6, "analysis"},
	{7, "validation"},
	{8, "report"},
}

// TierLabel returns the label of a phase (1..8), and false for any other
// number.
func TierLabel(phase int) (string, bool) {
	if phase < 1 || phase > len(Tiers) {
		return "", false
	}
	return Tiers[phase-1].Label, true
}

// PhaseOutputName returns the file name a phase output of phase must have,
// e.g. "phase-03-search.json", and false for a phase outside 1..8.
func PhaseOutputName(phase int) (string, bool) {
	label, ok := TierLabel(phase)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("phase-%02d-%s.json", phase, label), true
}

// rules applies the rules of docs/contract.md §3 that the schemas cannot express. It
// runs after the schema pass and looks only at values of the right type, so
// a value the schema already rejected is not reported twice.
func rules(schema, file string, doc any, loc locator) state.Problems {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	switch state.Class(schema) {
	case state.ClassWorkflowState:
		return workflowRules(file, obj, loc)
	case state.ClassPhaseOutput:
		return phaseOutputRules(file, obj, loc)
	case state.ClassPhaseOutcome:
		return phaseOutcomeRules(file, obj, loc)
	}
	return nil
}

// workflowRules: enforcement.blocking is true exactly when a CRITICAL or
// HIGH violation exists.
func workflowRules(file string, obj map[string]any, loc locator) state.Problems {
	enf, ok := obj["enforcement"].(map[string]any)
	if !ok {
		return nil
	}
	severe, severity := "", ""
	violations, _ := enf["violations"].([]any)
	for i, v := range violations {
		m, _ := v.(map[string]any)
		if s, _ := m["severity"].(string); s == "CRITICAL" || s == "HIGH" {
			severe, severity = "/enforcement/violations/"+strconv.Itoa(i), s
			break
		}
	}
	raw, present := enf["blocking"]
	blocking, isBool := raw.(bool)
	switch {
	case !present && severe != "":
		return state.Problems{loc.at(file, "/enforcement",
			fmt.Sprintf(`missing required property "blocking": must be true because %s is %s`, severe, severity))}
	case isBool && !blocking && severe != "":
		return state.Problems{loc.at(file, "/enforcement/blocking",
			fmt.Sprintf("value must be true because %s is %s", severe, severity))}
	case isBool && blocking && severe == "":
		return state.Problems{loc.at(file, "/enforcement/blocking",
			"value must be false because no violation is CRITICAL or HIGH")}
	}
	return nil
}

// phaseOutputRules: tier_label is the label of phase, the file is named
// after them, and completed_at is not before started_at.
func phaseOutputRules(file string, obj map[string]any, loc locator) state.Problems {
	var ps state.Problems
	if phase, ok := intValue(obj["phase"]); ok {
		if label, ok := TierLabel(phase); ok {
			tl, _ := obj["tier_label"].(string)
			if isLabel(tl) && tl != label {
				ps = append(ps, loc.at(file, "/tier_label",
					fmt.Sprintf("value must be %q, the label of phase %d, got %q", label, phase, tl)))
			}
			want, _ := PhaseOutputName(phase)
			if base := path.Base(filepath.ToSlash(file)); file != "" && file != "-" && base != want {
				ps = append(ps, loc.at(file, "/phase",
					fmt.Sprintf("file name must be %q for phase %d, got %q", want, phase, base)))
			}
		}
	}
	started, ok1 := timeValue(obj["started_at"])
	completed, ok2 := timeValue(obj["completed_at"])
	if ok1 && ok2 && completed.Before(started) {
		ps = append(ps, loc.at(file, "/completed_at",
			fmt.Sprintf("value must not be before started_at %s", obj["started_at"])))
	}
	return ps
}

func isLabel(s string) bool {
	return slices.ContainsFunc(Tiers, func(t Tier) bool { return t.Label == s })
}

// phaseOutcomeRules: each pending decision's recommended is one of its
// options.
func phaseOutcomeRules(file string, obj map[string]any, loc locator) state.Problems {
	var ps state.Problems
	decisions, _ := obj["pending_decisions"].([]any)
	for i, d := range decisions {
		m, _ := d.(map[string]any)
		rec, ok := m["recommended"].(string)
		opts, _ := m["options"].([]any)
		if !ok || len(opts) == 0 || slices.Contains(opts, any(rec)) {
			continue
		}
		ps = append(ps, loc.at(file, "/pending_decisions/"+strconv.Itoa(i)+"/recommended",
			fmt.Sprintf("value must be one of the decision's options %s, got %q", listValues(opts), rec)))
	}
	return ps
}

func listValues(vs []any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = display(v)
	}
	return strings.Join(out, ", ")
}

func intValue(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil && i >= -1<<31 && i < 1<<31 {
		return int(i), true
	}
	// 3.0 is an integer in JSON Schema.
	if f, err := n.Float64(); err == nil && f == float64(int(f)) && f >= -1<<31 && f < 1<<31 {
		return int(f), true
	}
	return 0, false
}

func timeValue(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// initiativeNext lists, per initiative status, the statuses it may move to
// (staying the same is always allowed).
var initiativeNext = map[string][]string{
	"created":     {"in_progress"},
	"in_progress": {"blocked", "completed"},
	"blocked":     {"in_progress"},
	"completed":   {"archived"},
	"archived":    nil,
}

// CheckTransition applies the initiative status state machine of docs/contract.md §3 to
// a new version cur of an initiative file against the last recorded version
// prev (nil when there is none). Undecodable cur gives its decoding
// problems; a prev without a known status, and a cur whose status the schema
// rejects, constrain nothing.
func CheckTransition(path string, prev, cur []byte) state.Problems {
	if len(cur) > DefaultMaxSize {
		return tooLarge(path, len(cur), DefaultMaxSize)
	}
	cv, loc, ps := decodeJSON(path, cur)
	if ps != nil {
		return ps
	}
	to, ok := initiativeStatus(cv)
	if !ok || prev == nil || len(prev) > DefaultMaxSize {
		return nil
	}
	pv, _, pps := decodeJSON(path, prev)
	if pps != nil {
		return nil
	}
	from, ok := initiativeStatus(pv)
	if !ok || from == to || slices.Contains(initiativeNext[from], to) {
		return nil
	}
	msg := fmt.Sprintf("status cannot change from %q to %q", from, to)
	switch {
	case from == "archived":
		msg += ": an archived initiative is final; create a new initiative instead"
	case from == "completed" && to == "in_progress":
		msg += ": a completed initiative is not reopened; create a new initiative instead"
	default:
		next := initiativeNext[from]
		quoted := make([]string, len(next))
		for i, n := range next {
			quoted[i] = strconv.Quote(n)
		}
		msg += fmt.Sprintf(", want %q or %s", from, strings.Join(quoted, " or "))
	}
	return state.Problems{loc.at(path, "/status", msg)}
}

func initiativeStatus(doc any) (string, bool) {
	obj, _ := doc.(map[string]any)
	s, ok := obj["status"].(string)
	if _, known := initiativeNext[s]; !ok || !known {
		return "", false
	}
	return s, true
}
