package phase

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-dev/strata/state"
)

// This file holds the rules of docs/contract.md §3 over one decoded document that the
// JSON Schemas cannot express, and the tier table they use. validate runs
// DocumentRules after its schema pass; the history rules are in history.go.

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

// At makes a problem at a JSON Pointer of the document being checked,
// positioned (line, column) where the decoder knows the value's place.
type At func(ptr, msg string) state.Problem

// DocumentRules applies the rules of docs/contract.md §3 that the schemas cannot express
// to a decoded document of the named schema (file is its path, "" or "-"
// when it has none). It runs after the schema pass and looks only at values
// of the right type, so a value the schema already rejected is not reported
// twice.
func DocumentRules(schema, file string, doc any, at At) state.Problems {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	switch state.Class(schema) {
	case state.ClassWorkflowState:
		return workflowRules(obj, at)
	case state.ClassPhaseOutput:
		return phaseOutputRules(file, obj, at)
	case state.ClassPhaseOutcome:
		return phaseOutcomeRules(obj, at)
	}
	return nil
}

// workflowRules: enforcement.blocking is true exactly when a CRITICAL or
// HIGH violation exists.
func workflowRules(obj map[string]any, at At) state.Problems {
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
		return state.Problems{at("/enforcement",
			fmt.Sprintf(`missing required property "blocking": must be true because %s is %s`, severe, severity))}
	case isBool && !blocking && severe != "":
		return state.Problems{at("/enforcement/blocking",
			fmt.Sprintf("value must be true because %s is %s", severe, severity))}
	case isBool && blocking && severe == "":
		return state.Problems{at("/enforcement/blocking",
			"value must be false because no violation is CRITICAL or HIGH")}
	}
	return nil
}

// phaseOutputRules: tier_label is the label of phase, the file is named
// after them, and completed_at is not before started_at.
func phaseOutputRules(file string, obj map[string]any, at At) state.Problems {
	var ps state.Problems
	if phase, ok := intValue(obj["phase"]); ok {
		if label, ok := TierLabel(phase); ok {
			tl, _ := obj["tier_label"].(string)
			if isLabel(tl) && tl != label {
				ps = append(ps, at("/tier_label",
					fmt.Sprintf("value must be %q, the label of phase %d, got %q", label, phase, tl)))
			}
			want, _ := PhaseOutputName(phase)
			if base := path.Base(filepath.ToSlash(file)); file != "" && file != "-" && base != want {
				ps = append(ps, at("/phase",
					fmt.Sprintf("file name must be %q for phase %d, got %q", want, phase, base)))
			}
		}
	}
	started, ok1 := timeValue(obj["started_at"])
	completed, ok2 := timeValue(obj["completed_at"])
	if ok1 && ok2 && completed.Before(started) {
		ps = append(ps, at("/completed_at",
			fmt.Sprintf("value must not be before started_at %s", obj["started_at"])))
	}
	return ps
}

func isLabel(s string) bool {
	return slices.ContainsFunc(Tiers, func(t Tier) bool { return t.Label == s })
}

// phaseOutcomeRules: each pending decision's recommended is one of its
// options.
func phaseOutcomeRules(obj map[string]any, at At) state.Problems {
	var ps state.Problems
	decisions, _ := obj["pending_decisions"].([]any)
	for i, d := range decisions {
		m, _ := d.(map[string]any)
		rec, ok := m["recommended"].(string)
		opts, _ := m["options"].([]any)
		if !ok || len(opts) == 0 || slices.Contains(opts, any(rec)) {
			continue
		}
		ps = append(ps, at("/pending_decisions/"+strconv.Itoa(i)+"/recommended",
			fmt.Sprintf("value must be one of the decision's options %s, got %q", listValues(opts), rec)))
	}
	return ps
}

func listValues(vs []any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = Display(v)
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

// Display shows a decoded value in a message: a string quoted (cut at 60
// characters), a number as written, a container by its kind.
func Display(v any) string {
	switch v := v.(type) {
	case string:
		if utf8.RuneCountInString(v) > 60 {
			v = string([]rune(v)[:57]) + "..."
		}
		return strconv.Quote(v)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case json.Number:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}
