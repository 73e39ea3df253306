package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/state"
)

type resolveOptions struct {
	DryRun bool
	JSON   bool
}

func newResolveCommand(e *env) *cli.Command {
	var o resolveOptions
	return &cli.Command{
		Name:  "resolve",
		Usage: "make the layers agree: the newest of L1 (state file) and L3 (memory graph) wins",
		Description: `For the workflow state and the initiative, takes the time of each layer's
last change (the commit that recorded its current version on refs/strata/state,
else the document's own lastUpdated / "updated:"), picks the newest of L1 and
L3, warns about layers more than 5 minutes apart, and rewrites the stale layer
to match; each rewrite is recorded with source resolve. A rewrite of L1 is
validated first (schema and the initiative status machine) and refused when
invalid. L2 (MEMORY.md) is shown but never authoritative.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "show the decisions, change nothing", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error { return runResolve(e, o) },
	}
}

// resolveItems are the items whose layers compete (SPEC §4).
var resolveItems = []struct {
	name  string
	class state.Class
	path  string // default L1 path
}{
	{"workflow-state", state.ClassWorkflowState, ".claude/workflow-state.json"},
	{"initiative", state.ClassInitiative, ".claude/initiative.json"},
}

type resolveJSON struct {
	conflict.Decision
	Result   string         `json:"result"` // consistent, resolved, refused, failed, dry-run
	Problems state.Problems `json:"problems,omitempty"`
}

// resolver holds what runResolve gathers once: the repository, the L3 file
// and its history.
type resolver struct {
	e         *env
	eng       *engine.Engine
	head      string
	graphK    config.Kept
	graphAbs  string
	g         *graph.Graph // nil when the file does not exist or cannot be read
	graphRec  bool         // the file on disk is the recorded version
	graphLog  []state.Entry
	warnedL3  bool
	l3Failure error
}

func runResolve(e *env, o resolveOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	r := &resolver{e: e, eng: eng}
	if r.head, err = eng.Head(); err != nil {
		return err
	}
	if err := r.loadGraph(); err != nil {
		return err
	}
	var out []resolveJSON
	refused := false
	for _, it := range resolveItems {
		k1, ok := r.kept(it.class, it.path)
		if !ok {
			continue
		}
		res, err := r.resolveItem(it.name, it.class, k1, o.DryRun)
		if err != nil {
			return err
		}
		if res.Result == "refused" {
			refused = true
		}
		out = append(out, res)
	}
	if o.JSON {
		if out == nil {
			out = []resolveJSON{}
		}
		if err := writeJSON(e.Out, map[string]any{"dry_run": o.DryRun, "decisions": out}); err != nil {
			return err
		}
	} else {
		printDecisions(e, out)
	}
	switch {
	case refused:
		return errReported
	case r.l3Failure != nil:
		return r.l3Failure
	}
	return nil
}

// kept finds the L1 path of a class: the default path, else the first kept
// path of that class.
func (r *resolver) kept(class state.Class, def string) (config.Kept, bool) {
	if k, ok := r.eng.Cfg.Classify(def); ok && k.Class == class {
		return k, true
	}
	all, err := r.eng.AllPaths()
	if err != nil {
		return config.Kept{}, false
	}
	for _, k := range all {
		if k.Class == class {
			return k, true
		}
	}
	return config.Kept{}, false
}

func (r *resolver) loadGraph() error {
	r.graphK = config.Kept{Path: r.eng.Cfg.Graph, Class: state.ClassGraph, Schema: "mcp-memory"}
	if k, ok := r.eng.Cfg.Classify(r.eng.Cfg.Graph); ok {
		r.graphK = k
	}
	r.graphAbs = r.eng.Cfg.Abs(r.graphK.Path)
	f, p := r.eng.Read(r.graphK)
	if p != nil {
		r.degraded(p)
		return nil
	}
	if f.Exists {
		r.g = graph.Parse(f.Content)
	}
	if r.head == "" {
		return nil
	}
	rec, err := r.eng.Store.ReadFile(r.head, r.graphK.Path)
	r.graphRec = err == nil && f.Exists && bytes.Equal(rec, f.Content)
	if r.graphRec {
		r.graphLog, err = r.eng.Store.Log(r.eng.Store.StateRef(), gitstore.LogQuery{Path: r.graphK.Path, Limit: 200})
		if err != nil {
			return err
		}
	}
	return nil
}

// degraded warns once that L3 cannot be used.
func (r *resolver) degraded(err error) {
	if !r.warnedL3 {
		fmt.Fprintf(r.e.Err, "strata: warning: %s: %v\n", graph.DegradedWarning, err)
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
		data, err := r.eng.Store.ReadFile(ent.Commit, r.graphK.Path)
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

func (r *resolver) resolveItem(name string, class state.Class, k1 config.Kept, dryRun bool) (resolveJSON, error) {
	eng := r.eng
	l1 := conflict.LayerTime{Layer: conflict.L1}
	f1, p := eng.Read(k1)
	if p != nil {
		return resolveJSON{Decision: conflict.Decision{Item: name, Actions: []conflict.Action{}}, Result: "refused", Problems: state.Problems{*p}}, nil
	}
	var doc map[string]any
	var prev []byte
	if r.head != "" {
		if b, err := eng.Store.ReadFile(r.head, k1.Path); err == nil {
			prev = b
		}
	}
	last, err := eng.Store.Log(eng.Store.StateRef(), gitstore.LogQuery{Path: k1.Path, Limit: 1})
	if err != nil {
		return resolveJSON{}, err
	}
	if f1.Exists {
		if err := json.Unmarshal(f1.Content, &doc); err != nil {
			ps := eng.Check(f1, prev)
			return resolveJSON{Decision: conflict.Decision{Item: name, Actions: []conflict.Action{}}, Result: "refused", Problems: ps}, nil
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

	l3 := conflict.LayerTime{Layer: conflict.L3}
	var ent graph.Entity
	if r.g != nil {
		var ok bool
		if ent, ok = r.g.Entity(graph.EntityName(class)); ok {
			l3.Present = true
			if t, ok := r.entityTime(class, ent); r.graphRec && ok {
				l3.Time, l3.Basis = t, conflict.BasisCommit
			} else if t, ok := ent.Updated(); ok {
				l3.Time, l3.Basis = t, conflict.BasisDocument
			}
		}
	}

	l2 := conflict.LayerTime{Layer: conflict.L2}
	if m, err := eng.Store.Log(eng.Store.StateRef(), gitstore.LogQuery{Path: eng.Cfg.Memory, Limit: 1}); err == nil && len(m) > 0 && m[0].Action != state.ActionDelete {
		l2.Present, l2.Time, l2.Basis = true, m[0].Time, conflict.BasisCommit
	}

	want, haveWant := graph.FromState(class, doc)
	inSync := (!haveWant && !l3.Present) || (haveWant && l3.Present && graph.Same(class, want, ent))
	res := resolveJSON{Decision: conflict.Decide(conflict.Input{Item: name, Layers: []conflict.LayerTime{l1, l2, l3}, InSync: inSync})}
	switch {
	case len(res.Actions) == 0:
		res.Result = "consistent"
		return res, nil
	case dryRun:
		res.Result = "dry-run"
		return res, nil
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(r.e.Err, "strata: warning: %s\n", w)
	}
	res.Result = "resolved"
	for _, a := range res.Actions {
		switch a.Layer {
		case conflict.L1:
			if ps, err := r.rewriteL1(class, k1, doc, prev, ent); err != nil {
				return res, err
			} else if ps != nil {
				res.Result, res.Problems = "refused", ps
				fmt.Fprintf(r.e.Err, "strata: refused to rewrite %s from L3:\n%s\n", k1.Path, ps.Error())
			}
		case conflict.L3:
			var err error
			if a.Kind == conflict.ActionClear {
				err = r.writeL3(func() (bool, error) { return graph.Remove(r.graphAbs, graph.EntityName(class)) })
			} else {
				err = r.writeL3(func() (bool, error) { return graph.Upsert(r.graphAbs, []graph.Entity{want}) })
			}
			if err != nil {
				res.Result = "failed"
			}
		}
	}
	return res, nil
}

// rewriteL1 writes the L3 entity's state into the L1 document, validated
// against its schema and the last recorded version; invalid content is
// refused (returned as problems) and nothing is written.
func (r *resolver) rewriteL1(class state.Class, k config.Kept, doc map[string]any, prev []byte, ent graph.Entity) (state.Problems, error) {
	next := graph.Apply(class, doc, ent)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(next); err != nil {
		return nil, err
	}
	if ps := r.eng.Check(engine.File{Kept: k, Content: b.Bytes(), Exists: true}, prev); ps.Invalid() {
		return ps, nil
	}
	if err := r.eng.WriteFile(k, b.Bytes()); err != nil {
		return nil, err
	}
	outs, err := r.eng.Record([]config.Kept{k}, state.SourceResolve)
	if err != nil {
		return nil, err
	}
	r.report(outs, "from L3")
	// L3 gets the normalised entity (phase_index and the like) so the next
	// resolve finds both layers in sync.
	if e, ok := graph.FromState(class, next); ok {
		_ = r.writeL3(func() (bool, error) { return graph.Upsert(r.graphAbs, []graph.Entity{e}) })
	}
	return nil, nil
}

// writeL3 runs one graph edit and records the file with source resolve.
func (r *resolver) writeL3(edit func() (bool, error)) error {
	changed, err := edit()
	if errors.Is(err, graph.ErrUnavailable) {
		r.degraded(err)
		r.l3Failure = err
		return err
	}
	if err != nil || !changed {
		return err
	}
	outs, err := r.eng.Record([]config.Kept{r.graphK}, state.SourceResolve)
	if err != nil {
		return err
	}
	r.report(outs, "from L1")
	return nil
}

func (r *resolver) report(outs []engine.Outcome, from string) {
	for _, o := range outs {
		if o.Entry != nil {
			fmt.Fprintf(r.e.Err, "rewrote %s %s (%s)\n", o.Path, from, short(o.Entry.Commit))
		}
		if len(o.Problems) > 0 {
			fmt.Fprintf(r.e.Err, "strata: warning: %s not recorded:\n%s\n", o.Path, o.Problems.Error())
		}
	}
}

func printDecisions(e *env, ds []resolveJSON) {
	tw := tabwriter.NewWriter(e.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tWINNER\tL1\tL2\tL3\tACTION")
	for _, d := range ds {
		winner := string(d.Winner)
		if winner == "" {
			winner = "-"
		}
		cols := []string{d.Item, winner}
		for _, lt := range d.Layers {
			cols = append(cols, layerCell(lt))
		}
		var acts []string
		for _, a := range d.Actions {
			acts = append(acts, a.String())
		}
		action := "none (in sync)"
		switch {
		case d.Result == "refused":
			action = "refused: " + strings.Join(acts, ", ")
		case len(acts) > 0 && d.Result == "dry-run":
			action = "would " + strings.Join(acts, ", ")
		case len(acts) > 0:
			action = strings.Join(acts, ", ")
		case d.Winner == "":
			action = "none (absent)"
		}
		cols = append(cols, action)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()
	for _, d := range ds {
		if d.Result == "dry-run" {
			for _, w := range d.Warnings {
				fmt.Fprintf(e.Err, "strata: warning: %s\n", w)
			}
		}
	}
}

func layerCell(lt conflict.LayerTime) string {
	switch {
	case !lt.Present:
		return "absent"
	case lt.Time.IsZero():
		return "present (time unknown)"
	}
	s := lt.Time.Local().Format(time.RFC3339)
	if lt.Basis == conflict.BasisDocument {
		s += " (document)"
	}
	if lt.Cleared {
		s += " (cleared)"
	}
	return s
}
