package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/jsonedit"
	"github.com/strata-dev/strata/state"
)

// The L3 entities strata keeps, one per L1 state class.
const (
	EntityWorkflowState  = "workflow-state"
	EntityInitiative     = "initiative-checkpoint"
	EntityInterviewState = "interview-state"
	EntityDelegationLog  = "delegation-log"
)

// field maps one observation key to one top-level member of the L1 document.
type field struct {
	key    string // observation key: "phase" in "phase: implement"
	member string // L1 member: "phase"
}

// catalogue is, per class, the entity name and type and the observations in
// the order FromState writes them. phase_index (workflow-state) and the
// delegation-log summary are derived, not mapped back by Apply.
// path is the L1 file the entity mirrors, named where a value is cut.
var catalogue = map[state.Class]struct {
	name, entityType, path string
	fields                 []field
}{
	state.ClassWorkflowState: {EntityWorkflowState, "workflow_state", ".claude/workflow-state.json", []field{
		{"type", "type"}, {"phase", "phase"}, {"phase_index", ""}, {"status", "status"},
		{"started", "startedAt"}, {"context", "context"}, {"updated", "lastUpdated"},
	}},
	state.ClassInitiative: {EntityInitiative, "initiative", ".claude/initiative.json", []field{
		{"name", "name"}, {"status", "status"}, {"milestone", "milestone"}, {"updated", "lastUpdated"},
	}},
	state.ClassInterviewState: {EntityInterviewState, "interview_state", ".claude/interview-state.json", []field{
		{"skill", "skill"}, {"confidence", "confidence"}, {"questions_asked", "questions_asked"}, {"updated", "timestamp"},
	}},
	state.ClassDelegationLog: {EntityDelegationLog, "delegation_log", ".claude/delegation-log.json", []field{
		{"entries", ""}, {"last_agent", ""}, {"last_outcome", ""}, {"updated", ""},
	}},
}

// RepoKey is the key of the observation that ties an entity strata keeps
// in a graph file outside the work tree — one file under the home
// directory that every project's memory server and strata share — to the
// repository whose L1 it mirrors: "repo: /real/path/of/the/work/tree"
// (WithRepo). strata owns it as it owns its catalogue's keys; Same does
// not compare it.
const RepoKey = "repo"

// WithRepo is e with the observation "repo: REPO" last.
func WithRepo(e Entity, repo string) Entity {
	e.Observations = append(slices.Clip(e.Observations), RepoKey+": "+repo)
	return e
}

// Tie is the repository the entity e, one strata keeps, names as the one
// whose L1 it mirrors: the value of its last "repo:" observation (has),
// and whether nothing strata owns follows that observation (last). The
// memory server's add_observations appends, so a "phase: …" or
// "context: …" after it was written by whatever writer came after the
// strata that wrote the repo: line — in a shared graph file, possibly
// another project's agent (attack33b F3): the entity is then nobody's
// for certain. Observations strata does not own (an agent's notes) do not
// count.
func Tie(e Entity) (repo string, has, last bool) {
	last = true
	for i := len(e.Observations) - 1; i >= 0; i-- {
		o := e.Observations[i]
		if v, ok := strings.CutPrefix(o, RepoKey+": "); ok {
			return v, true, last
		}
		if owns(e.Name, o) {
			last = false
		}
	}
	return "", false, false
}

// owns reports whether an observation of the entity named name is one
// strata writes: "key: …" with a key of the entity's catalogue (for
// workflow-state: type, phase, phase_index, status, started, context,
// updated), or RepoKey. Every observation of an entity strata does not
// keep is owned.
func owns(name, obs string) bool {
	for _, c := range catalogue {
		if c.name != name {
			continue
		}
		if strings.HasPrefix(obs, RepoKey+": ") {
			return true
		}
		for _, f := range c.fields {
			if strings.HasPrefix(obs, f.key+": ") {
				return true
			}
		}
		return false
	}
	return true
}

// EntityName returns the L3 entity of an L1 class, or "" when it has none.
func EntityName(class state.Class) string { return catalogue[class].name }

// FromState builds the L3 entity for an L1 document: workflow-state ->
// entity "workflow-state", initiative -> "initiative-checkpoint",
// interview-state -> "interview-state", delegation-log -> "delegation-log";
// observations in the seed's catalogue format ("type: APEX", "phase:
// implement", "phase_index: 3/5" when derivable from phases history,
// "started: …", "context: …", "updated: …", for initiative "status: …",
// "milestone: …"). ok=false for other classes or `{}`. Each value is
// quoted at most state.MaxQuoted characters (observed).
func FromState(class state.Class, doc map[string]any) (Entity, bool) {
	c, known := catalogue[class]
	if !known || len(doc) == 0 {
		return Entity{}, false
	}
	e := Entity{Name: c.name, EntityType: c.entityType, Observations: []string{}}
	for _, f := range c.fields {
		v, ok := derive(class, f, doc)
		if ok {
			e.Observations = append(e.Observations, f.key+": "+observed(class, v))
		}
	}
	return e, true
}

// observed is a value as an observation quotes it: at most
// state.MaxQuoted characters (state.Cut, as MEMORY.md's protocol lines
// quote a value), a cut one followed by where the whole state is. The
// memory server hands the graph to an agent whole (read_graph), so a
// design document pasted into a context would fill its context. A cut
// value is never mapped back into the L1 file (Changes).
func observed(class state.Class, v string) string {
	if c, cut := state.Cut(v, state.MaxQuoted); cut {
		return c + cutNote(class)
	}
	return v
}

// cutNote ends a cut observation: where the whole value is.
func cutNote(class state.Class) string {
	return " (cut; the whole state: strata show " + catalogue[class].path + ")"
}

func derive(class state.Class, f field, doc map[string]any) (string, bool) {
	if f.member != "" {
		return text(doc[f.member])
	}
	switch f.key {
	case "phase_index": // position of the current phase in the phases history
		phase, _ := doc["phase"].(string)
		phases, _ := doc["phases"].([]any)
		for i, p := range phases {
			if m, _ := p.(map[string]any); m != nil && m["name"] == phase && phase != "" {
				return fmt.Sprintf("%d/%d", i+1, len(phases)), true
			}
		}
	case "entries", "last_agent", "last_outcome", "updated": // delegation-log summary
		entries, _ := doc["entries"].([]any)
		if f.key == "entries" {
			return strconv.Itoa(len(entries)), true
		}
		if len(entries) == 0 {
			return "", false
		}
		last, _ := entries[len(entries)-1].(map[string]any)
		return text(last[map[string]string{"last_agent": "agent", "last_outcome": "outcome", "updated": "timestamp"}[f.key]])
	}
	return "", false
}

// text renders a JSON value as observation text: strings as they are,
// numbers and booleans as JSON writes them, objects and arrays as compact
// JSON. null and absent give ok false.
func text(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

// Apply returns a copy of doc with the members the entity's observations
// map back to (for workflow-state: type, phase, status, started ->
// startedAt, context, updated -> lastUpdated; for initiative: name, status,
// milestone, updated -> lastUpdated) set from e (see Changes).
func Apply(class state.Class, doc map[string]any, e Entity) map[string]any {
	out := make(map[string]any, len(doc)+4)
	for k, v := range doc {
		out[k] = v
	}
	for _, c := range Changes(class, doc, e) {
		out[c.Member] = c.Value
	}
	return out
}

// MemberChange is one top-level member of an L1 document set from L3.
type MemberChange struct {
	Member string
	Value  any
}

// Changes lists, in catalogue order, the members of doc that e's
// observations set to something else: a member whose observation text
// would stay the same (a number written 1.0 where L3 says 1) is not
// changed. A value whose member held a number, boolean, object or array is
// decoded as JSON when it parses so, numbers as json.Number (never
// float64, so 12345678901234567890 stays exact). A cut observation
// (observed) sets nothing: the document holds its whole value already,
// or another one the cut could not give back whole.
func Changes(class state.Class, doc map[string]any, e Entity) []MemberChange {
	var out []MemberChange
	for _, f := range catalogue[class].fields {
		if f.member == "" {
			continue
		}
		v, ok := e.Value(f.key)
		if !ok {
			continue
		}
		if cur, ok := text(doc[f.member]); ok && (cur == v || observed(class, cur) == v) {
			if _, present := doc[f.member]; present {
				continue
			}
		}
		if strings.HasSuffix(v, "…"+cutNote(class)) {
			continue // a cut value (observed) stands for another state: not a value to write
		}
		var val any = v
		if _, isString := doc[f.member].(string); !isString {
			var decoded any
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			if dec.Decode(&decoded) == nil && !dec.More() {
				if _, s := decoded.(string); !s && (doc[f.member] != nil || class == state.ClassInterviewState) {
					val = decoded
				}
			}
		}
		out = append(out, MemberChange{Member: f.member, Value: val})
	}
	return out
}

// Same reports whether two entities of a class hold the same state: every
// catalogue observation has the same last value in both. Other observations
// (an agent's notes added with add_observations) do not count.
func Same(class state.Class, a, b Entity) bool {
	for _, f := range catalogue[class].fields {
		va, oka := a.Value(f.key)
		vb, okb := b.Value(f.key)
		if oka != okb || va != vb {
			return false
		}
	}
	return true
}

// Keeps reports whether strata keeps an entity of that name (one per L1
// class: workflow-state, initiative-checkpoint, interview-state,
// delegation-log).
func Keeps(name string) bool {
	for _, c := range catalogue {
		if c.name == name {
			return true
		}
	}
	return false
}

// Own lists, in order, the observations of an entity strata keeps that
// strata owns: its "key: value" strings (see owns). A sync merge takes
// them from one side as a whole, never a union: two sides' "phase: …"
// would leave the entity with two phases. nil for an entity strata does not
// keep.
func Own(e Entity) []string {
	if !Keeps(e.Name) {
		return nil
	}
	var out []string
	for _, o := range e.Observations {
		if owns(e.Name, o) {
			out = append(out, o)
		}
	}
	return out
}

// WithOwn is an entity line of an entity strata keeps with the
// observations strata owns replaced by own, where the first of them was
// (else before the others), as Upsert places them; every other element and
// member keeps its bytes. The line comes back as it is when it already
// holds them, or has no observations array.
func WithOwn(text []byte, name string, own []string) []byte {
	vals, ok := memberValues(text)
	raw := vals["observations"]
	if !ok || raw == nil {
		return text
	}
	obs, ok := editObservations(name, raw, own)
	if !ok || obs == nil {
		return text
	}
	out, err := jsonedit.EditMembers(text, []jsonedit.Edit{{Key: "observations", Value: json.RawMessage(obs)}})
	if err != nil {
		return text
	}
	return out
}
