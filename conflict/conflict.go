// Package conflict decides which layer holds the truth when the layers of
// one item disagree (docs/contract.md §6): L1 (the state file) and L3 (the MCP memory
// graph) compete by the time of their last change, the newest wins, and the
// others are rewritten to match; L2 (MEMORY.md) is shown but never
// authoritative. It is pure: callers gather the times and apply the actions.
package conflict

import (
	"fmt"
	"time"
)

// Layer names one persistence layer.
type Layer string

// The layers.
const (
	L1 Layer = "L1" // .claude/*.json state files
	L2 Layer = "L2" // MEMORY.md
	L3 Layer = "L3" // the MCP memory graph
)

// StaleAfter is how far apart two layers' times may be before the older one
// is reported as stale.
const StaleAfter = 5 * time.Minute

// Basis says where a layer's time came from.
type Basis string

// The bases of a layer's time, from the most to the least trusted.
const (
	BasisCommit   Basis = "commit"   // the commit that recorded the current version on refs/strata/state
	BasisDocument Basis = "document" // the document's own lastUpdated / "updated:" (not recorded as it is)
	BasisNone     Basis = ""         // unknown
)

// LayerTime is what one layer holds for an item.
type LayerTime struct {
	Layer   Layer     `json:"layer"`
	Present bool      `json:"present"`           // the layer holds the item (a cleared state counts)
	Cleared bool      `json:"cleared,omitempty"` // it holds the cleared state ({} or a recorded deletion)
	Time    time.Time `json:"time,omitzero"`     // its last change; zero when unknown
	Basis   Basis     `json:"basis,omitempty"`
	// Unavailable says why the layer cannot be used this run (a graph file
	// that is private, outside the work tree, not a regular file): it holds
	// nothing, and Decide neither picks it nor rewrites it.
	Unavailable string `json:"unavailable,omitempty"`
}

// Input is everything Decide needs about one item.
type Input struct {
	Item   string      // "workflow-state", "initiative"
	Layers []LayerTime // L1, L2, L3 in any order; missing ones count as absent
	InSync bool        // L1 and L3 hold the same state
}

// ActionKind is what to do to a stale layer.
type ActionKind string

// The actions.
const (
	ActionRewrite ActionKind = "rewrite" // write the winner's state into the layer
	ActionClear   ActionKind = "clear"   // the winner holds the cleared state: clear the layer
)

// Action rewrites one layer from the winner.
type Action struct {
	Layer Layer      `json:"layer"`
	Kind  ActionKind `json:"kind"`
	From  Layer      `json:"from"`
}

func (a Action) String() string {
	if a.Kind == ActionClear {
		return fmt.Sprintf("clear %s (cleared in %s)", a.Layer, a.From)
	}
	return fmt.Sprintf("rewrite %s from %s", a.Layer, a.From)
}

// Decision is the outcome for one item.
type Decision struct {
	Item     string      `json:"item"`
	Winner   Layer       `json:"winner,omitempty"` // "" when no authoritative layer holds the item
	Layers   []LayerTime `json:"layers"`           // L1, L2, L3
	InSync   bool        `json:"in_sync"`
	Actions  []Action    `json:"actions"`
	Warnings []string    `json:"warnings,omitempty"`
}

// Decide picks the winner among L1 and L3: the present layer with the newest
// time (a known time beats an unknown one; a tie goes to L1, the primary
// layer). When the layers are out of sync every other authoritative layer is
// rewritten (or cleared) from the winner, and a layer more than StaleAfter
// older than the winner gets a staleness warning. L2 is listed, never chosen
// and never rewritten; neither is an Unavailable layer.
func Decide(in Input) Decision {
	d := Decision{Item: in.Item, InSync: in.InSync, Actions: []Action{}}
	by := map[Layer]LayerTime{}
	for _, lt := range in.Layers {
		by[lt.Layer] = lt
	}
	for _, l := range []Layer{L1, L2, L3} {
		lt := by[l]
		lt.Layer = l
		d.Layers = append(d.Layers, lt)
	}
	l1, l3 := by[L1], by[L3]
	l1.Layer, l3.Layer = L1, L3
	switch {
	case !l1.Present && !l3.Present:
		return d
	case !l3.Present:
		d.Winner = L1
	case !l1.Present:
		d.Winner = L3
	case l3.Time.After(l1.Time):
		d.Winner = L3
	default:
		d.Winner = L1
	}
	if in.InSync {
		return d
	}
	win, lose := l1, l3
	if d.Winner == L3 {
		win, lose = l3, l1
	}
	kind := ActionRewrite
	if win.Cleared {
		kind = ActionClear
	}
	if (!lose.Present && win.Cleared) || lose.Unavailable != "" {
		return d // nothing to clear, or no layer to write
	}
	d.Actions = append(d.Actions, Action{Layer: lose.Layer, Kind: kind, From: win.Layer})
	if lose.Present && !lose.Time.IsZero() && !win.Time.IsZero() {
		if gap := win.Time.Sub(lose.Time); gap > StaleAfter {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: %s is stale: %s older than %s", in.Item, lose.Layer, gap.Round(time.Second), win.Layer))
		}
	}
	return d
}
