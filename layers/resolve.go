package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/jsonedit"
	"github.com/strata-dev/strata/state"
)

// Resolve makes L1 and L3 agree for the workflow state and the initiative
// (docs/contract.md §6): per item, the newer layer wins, layers more than 5 minutes apart
// are reported as stale, and the stale one is rewritten (unless dryRun) and
// recorded with source resolve. A rewrite of L1 is validated first and
// refused (Result "refused") when invalid. note receives the warnings and the
// rewrites, one message each. An L1 file written by someone else between
// its read and its rewrite is not overwritten: its item is decided again
// from what is there now, at most engine.EditTries times (then the error is
// an *engine.ChangedError). The error wraps graph.ErrUnavailable when L3
// could not be written; the resolutions are returned with it.
func (a *Agent) Resolve(dryRun bool, note func(line string)) ([]Resolution, error) {
	r := &resolver{note: note, eng: a.Eng}
	var err error
	if r.head, err = r.eng.Head(); err != nil {
		return nil, err
	}
	if err := r.loadGraph(); err != nil {
		return nil, err
	}
	out := []Resolution{}
	for _, it := range resolveItems {
		k1, ok := r.kept(it.class)
		if !ok {
			continue
		}
		var res Resolution
		err := engine.Retry(func() error {
			var err error
			if res, err = r.resolveItem(it.name, it.class, k1, dryRun); errors.Is(err, engine.ErrChanged) {
				r.head, err = r.eng.Head() // L1 written since it was read: decide again from what is there now
				if err == nil {
					err = &engine.ChangedError{Path: k1.Path}
				}
			}
			return err
		})
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	// an unrecorded step the rewrites saved first gets the write protocol
	// (its L2 line), as any recorded step
	more, err := a.AfterSaves(r.saved)
	for _, o := range more {
		if n := SavedStepNote(o); n != "" {
			r.note(n)
		}
	}
	if err != nil {
		return out, err
	}
	return out, r.l3Failure
}

// resolveItems are the items whose layers compete (docs/contract.md §6).
var resolveItems = []struct {
	name  string
	class state.Class
}{
	{"workflow-state", state.ClassWorkflowState},
	{"initiative", state.ClassInitiative},
}

// Resolution is the decision for one item (workflow state, initiative) and
// what was done about it.
type Resolution struct {
	conflict.Decision
	Result   string         `json:"result"` // consistent, resolved, refused, failed, dry-run, unavailable (L3: nothing decided)
	Problems state.Problems `json:"problems,omitempty"`
	// L3Other: the graph file is shared (outside the work tree) and its
	// entity is another repository's — whose ("repo: /path", "no repo:
	// observation"); L3 then counts as missing
	L3Other string `json:"l3_other,omitempty"`
}

// resolver holds what Resolve gathers once: the repository, the L3 file
// and its history.
type resolver struct {
	note      func(line string) // warnings and rewrites, one message each
	eng       *engine.Engine
	head      string
	graphK    config.Kept
	g         *graph.Graph // nil when the file does not exist or cannot be read
	graphRec  bool         // the file on disk is the recorded version
	graphLog  []state.Entry
	l3Off     string          // why L3 is not used this run (conflict.LayerTime.Unavailable); "" when it is
	repo      string          // what a shared graph's entities must name to be this repository's (repoOf)
	top       string          // the work tree's real top (realTop): what no entity of an in-tree graph may name another than
	othered   map[string]bool // the items whose L3 entity was said to be another repository's
	warnedL3  bool
	l3Failure error
	saved     []engine.Outcome // L1 rewrites, with what they saved first (AfterSaves)
}

// kept finds the L1 file of a class: the first of l1Paths, the default
// paths kept under strata's own schema for the class. A file kept under a
// schema of the user's own (or plain json) is in its own shape: as for the
// write protocol, it is never read into L3 nor rewritten from it.
func (r *resolver) kept(class state.Class) (config.Kept, bool) {
	for _, p := range l1Paths(r.eng.Config(), class) {
		if k, ok := r.eng.Config().Classify(p); ok {
			return k, true
		}
	}
	return config.Kept{}, false
}

// loadGraph reads the graph file, when L3 may be used: a graph file that
// is not kept (private, or no rule keeps it) is neither read as an
// authority for L1 nor written nor recorded, as the write protocol never
// upserts it (attack33 H1); L3 is then unavailable for the run, said once
// as the protocol says it (privateLine). A graph file outside the work
// tree and the home directory, or one that cannot be read (a named pipe,
// a symbolic link), is unavailable too, and the run, --dry-run alike,
// ends in an error wrapping graph.ErrUnavailable that says why (attack33
// M1, L3: resolve called it absent, or gave a reason of a link).
func (r *resolver) loadGraph() error {
	cfg := r.eng.Config()
	r.graphK = config.Kept{Path: cfg.Graph, Class: state.ClassGraph, Schema: "mcp-memory"}
	k, ok := cfg.Classify(cfg.Graph)
	switch why := cfg.Private(cfg.Graph); {
	case ok:
		r.graphK, r.repo, r.top = k, repoOf(r.eng, k), realTop(r.eng)
	case why == config.WhyOutside || config.InOtherRepo(why):
		r.l3Off = why
		r.l3Failure = fmt.Errorf("%w: %s", graph.ErrUnavailable, offWhy(cfg.Graph, why))
		return nil
	default:
		r.l3Off = "not kept (no rule keeps it)"
		if why != "" {
			r.l3Off = "private (" + why + ")"
			r.note("strata: " + privateLine("L3", cfg.Graph, why, "resolve neither reads nor writes it"))
		}
		return nil
	}
	f, p := r.eng.Read(r.graphK)
	if p != nil {
		r.l3Off = p.Message
		r.l3Failure = fmt.Errorf("%w: %s: %s", graph.ErrUnavailable, state.ShownPath(p.Path), p.Message)
		return nil
	}
	if f.Exists {
		r.g = graph.Parse(f.Content)
	}
	if r.head == "" {
		return nil
	}
	rec, err := r.eng.FileAt(r.head, r.graphK.Path)
	r.graphRec = err == nil && f.Exists && bytes.Equal(rec, f.Content)
	if r.graphRec {
		r.graphLog, err = r.eng.Log(state.LogQuery{Path: r.graphK.Path, Limit: 200})
		if err != nil {
			return err
		}
	}
	return nil
}

// sayOther says, once per item, that the entity of a shared graph file is
// not this repository's (why: whose it is), and so not read into l1.
func (r *resolver) sayOther(item string, class state.Class, l1, why string) {
	if r.othered[item] {
		return
	}
	if r.othered == nil {
		r.othered = map[string]bool{}
	}
	r.othered[item] = true
	r.note(fmt.Sprintf("strata: L3 %s: its %s entity is not this repository's (%s): it is not read into %s, and counts as missing",
		state.ShownPath(r.graphK.Path), graph.EntityName(class), why, l1))
}

// degraded warns once that L3 cannot be used.
func (r *resolver) degraded(err error) {
	if !r.warnedL3 {
		r.note(fmt.Sprintf("strata: warning: %s: %v", graph.DegradedWarning, err))
		r.warnedL3 = true
	}
}

// entityTime is the commit time of the version of the graph file that
// brought the entity's current content: later commits that changed other
// lines of the file do not make this entity newer.
func (r *resolver) entityTime(class state.Class, cur graph.Entity) (time.Time, bool) {
	var t time.Time
	for _, ent := range r.graphLog {
		if ent.Action == state.ActionDelete {
			break
		}
		data, err := r.eng.FileAt(ent.Commit, r.graphK.Path)
		if err != nil {
			break
		}
		old, ok := graph.Parse(data).Entity(cur.Name)
		if !ok || !graph.Same(class, old, cur) {
			break
		}
		t = ent.Time
	}
	return t, !t.IsZero()
}

func (r *resolver) resolveItem(name string, class state.Class, k1 config.Kept, dryRun bool) (Resolution, error) {
	eng := r.eng
	l1 := conflict.LayerTime{Layer: conflict.L1}
	f1, p := eng.Read(k1)
	if p != nil {
		return Resolution{Decision: conflict.Decision{Item: name, Actions: []conflict.Action{}}, Result: "refused", Problems: state.Problems{*p}}, nil
	}
	var doc map[string]any
	var prev []byte
	if r.head != "" {
		if b, err := eng.FileAt(r.head, k1.Path); err == nil {
			prev = b
		}
	}
	last, err := eng.Log(state.LogQuery{Path: k1.Path, Limit: 1})
	if err != nil {
		return Resolution{}, err
	}
	if f1.Exists {
		if err := json.Unmarshal(f1.Content, &doc); err != nil {
			ps := eng.Check(f1, prev)
			return Resolution{Decision: conflict.Decision{Item: name, Actions: []conflict.Action{}}, Result: "refused", Problems: ps}, nil
		}
		l1.Present, l1.Cleared = true, len(doc) == 0
		if prev != nil && bytes.Equal(prev, f1.Content) && len(last) > 0 {
			l1.Time, l1.Basis = last[0].Time, conflict.BasisCommit
		} else if s, _ := doc["lastUpdated"].(string); s != "" {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				l1.Time, l1.Basis = t, conflict.BasisDocument
			}
		}
	} else if len(last) > 0 && last[0].Action == state.ActionDelete {
		l1.Present, l1.Cleared, l1.Time, l1.Basis = true, true, last[0].Time, conflict.BasisCommit
	}

	l3 := conflict.LayerTime{Layer: conflict.L3, Unavailable: r.l3Off}
	var ent graph.Entity
	var other string
	if r.g != nil {
		var ok bool
		if ent, ok = r.g.Entity(graph.EntityName(class)); ok {
			if ok, other = ownEntity(ent, r.repo, r.top); !ok {
				// a shared graph's entity of another project (attack33
				// H2): never L1's authority here, and missing for the
				// decision, so L1's state is upserted over it
				ent = graph.Entity{}
				r.sayOther(name, class, k1.Path, other)
			}
		}
		if ok {
			l3.Present = true
			if t, ok := r.entityTime(class, ent); r.graphRec && ok {
				l3.Time, l3.Basis = t, conflict.BasisCommit
			} else if t, ok := ent.Updated(); ok {
				l3.Time, l3.Basis = t, conflict.BasisDocument
			}
		}
	}

	l2 := conflict.LayerTime{Layer: conflict.L2}
	if m, err := eng.Log(state.LogQuery{Path: eng.Config().L2(), Limit: 1}); err == nil && len(m) > 0 && m[0].Action != state.ActionDelete {
		l2.Present, l2.Time, l2.Basis = true, m[0].Time, conflict.BasisCommit
	}

	want, haveWant := graph.FromState(class, doc)
	inSync := (!haveWant && !l3.Present) || (haveWant && l3.Present && graph.Same(class, want, ent))
	if haveWant && r.repo != "" {
		want = graph.WithRepo(want, r.repo)
	}
	res := Resolution{Decision: conflict.Decide(conflict.Input{Item: name, Layers: []conflict.LayerTime{l1, l2, l3}, InSync: inSync}), L3Other: other}
	switch {
	case len(res.Actions) == 0 && l3.Unavailable != "":
		res.Result = "unavailable"
		return res, nil
	case len(res.Actions) == 0:
		res.Result = "consistent"
		return res, nil
	case dryRun:
		res.Result = "dry-run"
		return res, nil
	}
	for _, w := range res.Warnings {
		r.note(fmt.Sprintf("strata: warning: %s", w))
	}
	res.Result = "resolved"
	for _, a := range res.Actions {
		switch a.Layer {
		case conflict.L1:
			if ps, err := r.rewriteL1(class, k1, f1.ID(), f1.Content, doc, ent); err != nil {
				return res, err
			} else if ps != nil {
				res.Result, res.Problems = "refused", ps
				r.note(fmt.Sprintf("strata: refused to rewrite %s from L3:\n%s", k1.Path, ps.Error()))
			}
		case conflict.L3:
			var err error
			if a.Kind == conflict.ActionClear {
				err = r.writeL3(func(f graph.File) (bool, error) { return f.Remove(graph.EntityName(class)) })
			} else {
				err = r.writeL3(func(f graph.File) (bool, error) { return f.Upsert([]graph.Entity{want}) })
			}
			if err != nil {
				res.Result = "failed"
			}
		}
	}
	return res, nil
}

// rewriteL1 writes the L3 entity's state into the L1 file in place: only
// the members the entity sets to another value change (graph.Changes), and
// every other byte of the file stays (jsonedit). The result is validated
// against the schema and the last recorded version; invalid content is
// refused (returned as problems) and nothing is written. It is written only
// while the file is still base, the version cur was read as (File.ID): else
// the error is a *engine.ChangedError, and nothing is written.
func (r *resolver) rewriteL1(class state.Class, k config.Kept, base string, cur []byte, doc map[string]any, ent graph.Entity) (state.Problems, error) {
	var edits []jsonedit.Edit
	for _, c := range graph.Changes(class, doc, ent) {
		v, err := safeJSON(c.Value)
		if err != nil {
			return nil, err
		}
		edits = append(edits, jsonedit.Edit{Key: c.Member, Value: v})
	}
	if doc == nil {
		cur = []byte("{}\n") // a deleted file (or a null) comes back as a new object
	}
	next, err := jsonedit.EditMembers(cur, edits)
	if err != nil {
		return nil, err
	}
	o, err := r.eng.Put(k, base, next, state.SourceResolve)
	if err != nil {
		return nil, err
	}
	if !o.Written {
		return o.Problems, nil
	}
	r.saved = append(r.saved, o)
	r.report([]engine.Outcome{o}, "from L3")
	// L3 gets the normalised entity (phase_index and the like) so the next
	// resolve finds both layers in sync.
	if e, ok := graph.FromState(class, decodeObject(next)); ok {
		if r.repo != "" {
			e = graph.WithRepo(e, r.repo)
		}
		_ = r.writeL3(func(f graph.File) (bool, error) { return f.Upsert([]graph.Entity{e}) })
	}
	return nil, nil
}

// safeJSON encodes a value resolve writes into an L1 file as jsonedit
// would (encoding/json, no HTML escaping), with every character
// state.JSONSafe escapes — a bidi control, a zero width, DEL, a C1
// control — written as its \uXXXX escape: the rule of every JSON strata
// prints holds for the JSON it writes, so cat and git diff show the file
// in order (attack35b L3: an L3 "phase: review \u202egnp.exe" became a raw
// U+202E in .claude/workflow-state.json). The value decodes the same.
func safeJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(state.JSONSafe(bytes.TrimSuffix(b.Bytes(), []byte("\n")))), nil
}

// writeL3 runs one graph edit on the graph file (read through the
// engine's door), after the engine's check of where it may write
// (engine.WriteOwn), and records the
// file with source resolve. A graph file strata may not write (its
// directory a symbolic link out of the work tree or into .git) counts as
// an unavailable L3: nothing is written.
func (r *resolver) writeL3(edit func(graph.File) (bool, error)) error {
	changed, err := r.eng.WriteOwn(r.graphK, func(name string) (bool, error) {
		return edit(graphFile(r.eng, r.graphK, name))
	})
	if err != nil {
		var lines []string
		if lines, err = refusals(err, r.graphK.Path); len(lines) > 0 {
			for _, l := range lines {
				r.note("strata: " + l)
			}
			if err == nil {
				err = errRefused // L3 is there; this entity was not written
			}
		}
	}
	var refused *engine.PathError
	if errors.As(err, &refused) {
		err = fmt.Errorf("%w: %w", graph.ErrUnavailable, err)
	}
	if errors.Is(err, graph.ErrUnavailable) {
		r.degraded(err)
		r.l3Failure = err
		return err
	}
	if (err != nil && err != errRefused) || !changed {
		return err
	}
	outs, rerr := r.eng.Record([]config.Kept{r.graphK}, state.SourceResolve)
	if rerr != nil {
		return rerr
	}
	r.report(outs, "from L1")
	return err
}

// errRefused: the graph file refused strata's entity (refusals); it was
// named in a note, and the item's result is "failed".
var errRefused = errors.New("L3 entity refused")

func (r *resolver) report(outs []engine.Outcome, from string) {
	for _, o := range outs {
		if note := r.eng.SavedNote(o); note != "" {
			r.note(note)
		}
		if o.Entry != nil {
			r.note(fmt.Sprintf("rewrote %s %s (%s)", o.Path, from, state.ShortID(o.Entry.Commit)))
		}
		if len(o.Problems) > 0 {
			r.note(fmt.Sprintf("strata: warning: %s not recorded:\n%s", o.Path, o.Problems.Error()))
		}
	}
}
