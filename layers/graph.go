package layers

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/state"
)

// Entity is one entity of the L3 graph.
type Entity = graph.Entity

// Graph is the L3 writer: MCPGraph in strata, a fake in tests.
type Graph interface {
	// FromState builds the L3 entity of an L1 document.
	FromState(class state.Class, doc map[string]any) (Entity, bool)
	// Upsert replaces or adds entities in the JSONL file f (written at
	// f.Name, read through f's door) and removes the entities named remove
	// (of L1 documents cleared), keeping every other line byte for byte,
	// atomically; it reports whether the file changed.
	Upsert(f graph.File, entities []Entity, remove []string) (bool, error)
}

// MCPGraph is the MCP memory server's JSONL file, through package graph.
type MCPGraph struct{}

// FromState builds the entity of an L1 document (graph.FromState).
func (MCPGraph) FromState(c state.Class, doc map[string]any) (Entity, bool) {
	return graph.FromState(c, doc)
}

// Upsert writes entities into the file and removes those named remove,
// keeping every other line (graph.UpsertRemove).
func (MCPGraph) Upsert(f graph.File, entities []Entity, remove []string) (bool, error) {
	return f.UpsertRemove(entities, remove)
}

var _ Graph = MCPGraph{}

// NoGraph writes nothing: the protocol stops at L2.
type NoGraph struct{}

// FromState builds nothing.
func (NoGraph) FromState(state.Class, map[string]any) (Entity, bool) { return Entity{}, false }

// Upsert writes nothing.
func (NoGraph) Upsert(graph.File, []Entity, []string) (bool, error) { return false, nil }

var _ Graph = NoGraph{}

// DefaultGraph is the Graph new agents use.
var DefaultGraph Graph = MCPGraph{}

// repoOf is the repository strata ties its entities to in the graph file
// of k (graph.RepoKey): for a graph file outside the work tree — a "~/"
// path, which every project's memory server and strata may share — the
// real path of the work tree's top (realTop); "" for one inside the work
// tree, which is this repository's alone.
func repoOf(eng *engine.Engine, k config.Kept) string {
	if !strings.HasPrefix(k.Path, "~/") {
		return ""
	}
	return realTop(eng)
}

// realTop is the real path of the work tree's top: what this repository's
// repo: observations name.
func realTop(eng *engine.Engine) string {
	if real, err := filepath.EvalSymlinks(eng.Root()); err == nil {
		return real
	}
	return eng.Root()
}

// ownEntity reports whether e, an entity of the graph file whose
// repository is repo (repoOf), is this repository's. In a shared graph
// file (repo not ""), when its last repo: observation names repo and no
// observation strata owns follows it: one appended after it (the memory
// server's add_observations, for whichever project's agent called it) may
// be another project's state (attack33b F3), so the entity is then not
// read as this repository's. In a graph file inside the work tree, unless
// its last repo: names another work tree than top (this one's real top):
// another repository's strata wrote it there (attack33b F1). Else why says
// whose it is.
func ownEntity(e Entity, repo, top string) (ok bool, why string) {
	v, has, last := graph.Tie(e)
	switch {
	case repo == "":
		if has && v != top {
			return false, graph.RepoKey + ": " + state.TermSafe(v)
		}
		return true, ""
	case !has:
		return false, "no " + graph.RepoKey + ": observation"
	case v != repo:
		return false, graph.RepoKey + ": " + state.TermSafe(v)
	case !last:
		return false, "observations of strata's keys follow its " + graph.RepoKey + ": line, appended by another writer, possibly another project's agent"
	}
	return true, ""
}

// graphFile is the graph file of k at name (WriteOwn's), read through the
// engine's door for k: resolved beneath the work tree at each read. A file
// over max_size is neither read nor written (graph.File.Max): strata
// records no version of it, neither the one before an upsert nor the one
// after, and resume and resolve already take it for an unavailable L3.
func graphFile(eng *engine.Engine, k config.Kept, name string) graph.File {
	tree, rel := eng.Door(k)
	return graph.File{Name: name, Tree: tree, Rel: rel, Max: eng.Config().MaxSize}
}

// refusals splits an Upsert error into the entities it refused to write
// (graph.ObservationsError, named by the file's repo-relative path shown)
// and any other error. A refusal leaves L3 available: the file got the
// other entities, and the refused line is kept as it is.
func refusals(err error, shown string) (lines []string, rest error) {
	var other []error
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var oe *graph.ObservationsError
		if errors.As(e, &oe) {
			c := *oe
			c.Path = state.TermSafe(shown)
			lines = append(lines, c.Error())
			continue
		}
		other = append(other, e)
	}
	if len(lines) == 0 {
		// nothing taken out: the error as it was (a message that wraps
		// two errors, "L3 unavailable: PATH: why", split and joined again
		// lost its path and took two lines: attack20-headline H7)
		return nil, err
	}
	return lines, errors.Join(other...)
}
