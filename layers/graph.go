package layers

import "github.com/strata-dev/strata/state"

// Entity is one entity of the L3 graph, as graph.Entity.
type Entity struct {
	Name         string
	EntityType   string
	Observations []string
}

// Graph is the L3 writer. The graph package (graph.Upsert, graph.FromState)
// implements it; until it is linked, DefaultGraph is NoGraph and the
// protocol stops at L2.
type Graph interface {
	// FromState builds the L3 entity of an L1 document.
	FromState(class state.Class, doc map[string]any) (Entity, bool)
	// Upsert replaces or adds entities in the JSONL file at path, keeping
	// every other line byte for byte, atomically; it reports whether the
	// file changed.
	Upsert(path string, entities []Entity) (bool, error)
}

// NoGraph is the Graph of a build without the graph package: it writes nothing.
type NoGraph struct{}

// FromState builds nothing.
func (NoGraph) FromState(state.Class, map[string]any) (Entity, bool) { return Entity{}, false }

// Upsert writes nothing.
func (NoGraph) Upsert(string, []Entity) (bool, error) { return false, nil }

var _ Graph = NoGraph{}

// DefaultGraph is the Graph new agents use.
var DefaultGraph Graph = NoGraph{}
