package syncer

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/state"
)

// resolve decides, with conflict.Resolve, each kept path both sides changed
// whose class merges rather than decides (MEMORY.md, the graph, Phase
// Outcomes and resolutions) or has a history rule (initiatives). gitstore
// has already decided every such path by time; this replaces that decision
// where the class asks for more. A path both sides added to an append-only
// class keeps both: the later version moves to the next free number, a path
// added to the plan.
func resolve(eng *engine.Engine, m *engine.Merge) error {
	var taken map[string]bool
	var added []engine.MergePath
	// the graph last: its entities follow the L1 files' decisions (ownSides)
	order := make([]int, 0, len(m.Paths))
	var graphs []int
	for i := range m.Paths {
		if k, ok := eng.MergeKept(m.Paths[i].Path); ok && k.Class == state.ClassGraph {
			graphs = append(graphs, i)
		} else {
			order = append(order, i)
		}
	}
	order = append(order, graphs...)
	var own map[string]bool
paths:
	for n, i := range order {
		p := &m.Paths[i]
		if !p.ByTime {
			continue
		}
		k, ok := eng.MergeKept(p.Path)
		if !ok || !conflict.NeedsContent(k.Class) {
			continue
		}
		in := conflict.PathInput{Path: p.Path, Class: k.Class}
		if k.Class == state.ClassGraph {
			if own == nil {
				own = ownSides(eng, m, order[:n])
			}
			in.OwnTheirs = own
		}
		for _, v := range []struct {
			id  string
			dst *conflict.Version
		}{{p.Base, &in.Base}, {p.Ours, &in.Ours}, {p.Theirs, &in.Theirs}} {
			if v.id == "" {
				continue
			}
			data, err := eng.Blob(v.id)
			if tooLarge(p, err) {
				continue paths // that version stays out; everything else merges
			}
			if err != nil {
				return fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
			}
			v.dst.Present, v.dst.Data = true, data
		}
		in.Ours.Stamp, in.Theirs.Stamp = p.OursAt, p.TheirsAt
		if k.Class.Immutable() {
			if taken == nil {
				var err error
				if taken, err = treePaths(eng, m); err != nil {
					return err
				}
			}
			in.Taken = func(path string) bool { return taken[path] || taken[conflict.NumberKey(path)] }
		}
		in.Rule = func(prev, next []byte) string {
			ps := eng.Check(engine.File{Kept: k, Content: next, Exists: true}, prev)
			return reasons(ps, p.Path)
		}
		out, err := conflict.Resolve(in)
		if err != nil {
			return err
		}
		p.Why, p.Dropped, p.DroppedOurs = out.Why, out.Dropped, out.DroppedOurs
		if out.Refused {
			p.KeptLocal, p.Why = "merged version invalid: "+out.Why, ""
		}
		switch out.Take {
		case conflict.TakeOurs, conflict.TakeTheirs:
			p.Decide(out.Take == conflict.TakeTheirs)
			p.MergedBoth = in.Ours.Present && in.Theirs.Present && out.Why == "" &&
				(k.Class == state.ClassMemory || k.Class == state.ClassGraph)
		case conflict.TakeMerged:
			p.Merged, p.Result, p.MergedBoth = out.Data, engine.BlobHash(out.Data), true
		case conflict.TakeBoth:
			earlier, later := p.Ours, p.Theirs
			if !out.LaterIsTheirs {
				earlier, later = later, earlier
			}
			p.Result, p.KeptBoth = earlier, out.Rename
			taken[out.Rename], taken[conflict.NumberKey(out.Rename)] = true, true
			added = append(added, engine.MergePath{Path: out.Rename, Result: later, MovedFrom: p.Path})
		}
	}
	if len(added) > 0 {
		m.Paths = append(m.Paths, added...)
		sort.Slice(m.Paths, func(i, j int) bool { return m.Paths[i].Path < m.Paths[j].Path })
	}
	return nil
}

// ownSides maps each entity strata keeps in L3 to whether the merge took
// theirs (true) or ours of the L1 file it mirrors — a default L1 path kept
// under strata's own schema for its class, as the layer protocol reads
// it — for each such file among the paths done whose two sides differ and
// whose result is one of them.
func ownSides(eng *engine.Engine, m *engine.Merge, done []int) map[string]bool {
	own := map[string]bool{}
	for _, i := range done {
		p := &m.Paths[i]
		k, ok := eng.MergeKept(p.Path)
		name := graph.EntityName(k.Class)
		if !ok || name == "" || p.Ours == p.Theirs || !strataL1(p.Path, k) {
			continue
		}
		switch p.Result {
		case p.Theirs:
			own[name] = true
		case p.Ours:
			own[name] = false
		}
	}
	return own
}

// strataL1 reports whether a kept path is an L1 file the layer protocol
// reads into L3: a default path of its class, kept under the class's own
// schema.
func strataL1(path string, k config.Kept) bool {
	for _, r := range config.DefaultRules {
		if r.Glob == path && r.Class == k.Class && r.Schema == k.Schema {
			return true
		}
	}
	return false
}

// keepBothOrNeither undoes a keep-both whose moved version was refused:
// the original path keeps the local version too, so neither side's version
// leaves this machine's tree.
func keepBothOrNeither(m *engine.Merge) {
	refused := map[string]string{}
	for i := range m.Paths {
		if p := &m.Paths[i]; p.MovedFrom != "" && p.KeptLocal != "" {
			refused[p.MovedFrom] = p.KeptLocal
		}
	}
	for i := range m.Paths {
		if p := &m.Paths[i]; p.KeptBoth != "" && refused[p.Path] != "" {
			p.Result, p.KeptLocal = p.Ours, "the other version cannot be kept as "+p.KeptBoth+": "+refused[p.Path]
		}
	}
}

// treePaths is every path of both sides of the merge, and the number key
// (conflict.NumberKey) of each numbered one.
func treePaths(eng *engine.Engine, m *engine.Merge) (map[string]bool, error) {
	out := map[string]bool{}
	for _, c := range []string{m.Ours, m.Theirs} {
		if c == "" {
			continue
		}
		files, err := eng.MergeFiles(c)
		if err != nil {
			return nil, err
		}
		for p := range files {
			out[p] = true
			if key := conflict.NumberKey(p); key != "" {
				out[key] = true // the number is taken, whatever the name after it
			}
		}
	}
	return out, nil
}

// reasons joins the errors among problems, without their path prefix.
func reasons(ps state.Problems, path string) string {
	var why []string
	n := 0
	for _, pr := range ps {
		if pr.Warning {
			continue
		}
		if n++; n <= maxReasons {
			why = append(why, strings.TrimPrefix(pr.Error(), path+": "))
		}
	}
	if n > maxReasons {
		why = append(why, fmt.Sprintf("and %d more (strata validate lists them)", n-maxReasons))
	}
	return strings.Join(why, "; ")
}

// maxReasons is how many of a version's problems the reason a merge gives
// for refusing it names: the reason goes into the report and into the merge
// commit's message, which is pushed, and a remote can send as many invalid
// files as it likes.
const maxReasons = 3

// Loss is a local version a sync did not take.
type Loss = engine.Lost

// Losses lists the local versions that past syncs did not take and whose
// path has not been recorded since, for `strata status`; each comes back
// with `strata restore PATH --rev REV` (engine.Engine.Losses).
func Losses(eng *engine.Engine) ([]engine.Lost, error) { return eng.Losses() }

// onTrackingRef ends tooLarge's kept local reason; a version kept in the
// shared state (keepNotTaken) says where it stays instead.
const onTrackingRef = " (it stays on the remote's tracking ref)"

// tooLarge keeps the local version of a path when a version the merge would
// need is over max_size (judged by its object header, never read whole): the
// remote's version stays on the tracking ref, reported, and every other path
// still merges.
func tooLarge(p *engine.MergePath, err error) bool {
	var tl *engine.TooLargeError
	if !errors.As(err, &tl) {
		return false
	}
	p.KeptLocal = fmt.Sprintf("a version is %d bytes, over max_size %d: not taken", tl.Size, tl.Limit) + onTrackingRef
	p.Result, p.Merged, p.Why = p.Ours, nil, ""
	return true
}
