package semantic

import (
	"fmt"
	"reflect"
	"strings"
)

// Change is one key-level change. Op is "+" (added), "-" (removed) or "~"
// (changed). For a tree, Key is a JSON Pointer and Old/New compact JSON;
// for the graph, an entity or relation with the observations added (New)
// and removed (Old); for MEMORY.md, a section with the lines added and
// removed.
type Change struct {
	Op      string   `json:"op"`
	Key     string   `json:"key"`
	Old     string   `json:"old,omitempty"`
	New     string   `json:"new,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// String is the change as `strata diff --keys` prints it.
func (c Change) String() string {
	switch {
	case c.Added != nil || c.Removed != nil:
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s", c.Op, c.Key)
		for _, l := range c.Removed {
			fmt.Fprintf(&b, "\n    - %s", l)
		}
		for _, l := range c.Added {
			fmt.Fprintf(&b, "\n    + %s", l)
		}
		return b.String()
	case c.Op == "~":
		return fmt.Sprintf("%s: %s → %s", c.Key, c.Old, c.New)
	case c.Op == "+" && c.New != "":
		return fmt.Sprintf("+ %s: %s", c.Key, c.New)
	case c.Op == "-" && c.Old != "":
		return fmt.Sprintf("- %s: %s", c.Key, c.Old)
	}
	return c.Op + " " + c.Key
}

// Text is changes as `strata diff --keys` prints them, one change (and its
// indented lines) after another, each ending in a newline.
func Text(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

// Diff compares two versions of a file (nil: the file did not exist).
// Trees are compared by value: object key order and whitespace do not
// matter; arrays are compared index by index.
func Diff(path string, kind Kind, a, b []byte) ([]Change, error) {
	switch kind {
	case KindGraph:
		return diffItems(graphGroups(a), graphGroups(b)), nil
	case KindMemory:
		return diffItems(memoryGroups(a), memoryGroups(b)), nil
	}
	var x, y any
	var err error
	if a != nil {
		if x, err = Decode(path, a); err != nil {
			return nil, err
		}
	}
	if b != nil {
		if y, err = Decode(path, b); err != nil {
			return nil, err
		}
	}
	out := []Change{}
	// A file that did not exist is an empty document of the other side's
	// kind: an object's keys are each added (or removed).
	_, xObj := x.(map[string]any)
	_, yObj := y.(map[string]any)
	switch {
	case a == nil && b == nil:
	case a == nil && yObj:
		diffTree("", map[string]any{}, y, &out)
	case a == nil:
		out = append(out, Change{Op: "+", Key: "/", New: Compact(y)})
	case b == nil && xObj:
		diffTree("", x, map[string]any{}, &out)
	case b == nil:
		out = append(out, Change{Op: "-", Key: "/", Old: Compact(x)})
	default:
		diffTree("", x, y, &out)
	}
	return out, nil
}

func diffTree(ptr string, x, y any, out *[]Change) {
	switch xv := x.(type) {
	case map[string]any:
		if yv, ok := y.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range xv {
				keys[k] = true
			}
			for k := range yv {
				keys[k] = true
			}
			for _, k := range sortedKeys(keys) {
				p := ptr + "/" + Escape(k)
				xc, inX := xv[k]
				yc, inY := yv[k]
				switch {
				case !inX:
					*out = append(*out, Change{Op: "+", Key: p, New: short(yc)})
				case !inY:
					*out = append(*out, Change{Op: "-", Key: p})
				default:
					diffTree(p, xc, yc, out)
				}
			}
			return
		}
	case []any:
		if yv, ok := y.([]any); ok {
			for i := 0; i < max(len(xv), len(yv)); i++ {
				p := fmt.Sprintf("%s/%d", ptr, i)
				switch {
				case i >= len(xv):
					*out = append(*out, Change{Op: "+", Key: p, New: short(yv[i])})
				case i >= len(yv):
					*out = append(*out, Change{Op: "-", Key: p})
				default:
					diffTree(p, xv[i], yv[i], out)
				}
			}
			return
		}
	}
	if !reflect.DeepEqual(x, y) {
		key := ptr
		if key == "" {
			key = "/"
		}
		*out = append(*out, Change{Op: "~", Key: key, Old: Compact(x), New: Compact(y)})
	}
}

// short is a scalar's JSON; "" for an object or array (named only).
func short(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		return ""
	}
	return Compact(v)
}

// group is a named item with lines: an entity with its observations, a
// section with its lines.
type group struct {
	key   string
	lines []string
}

func graphGroups(data []byte) []group {
	var out []group
	for _, e := range readGraph(data) {
		out = append(out, group{e.Key, e.Observations})
	}
	return out
}

func memoryGroups(data []byte) []group {
	var out []group
	if data == nil {
		return out
	}
	for _, s := range readSections(data) {
		out = append(out, group{s.Key, s.Lines})
	}
	return out
}

// diffItems compares groups by key, their lines as sets (a repeated key's
// lines are merged).
func diffItems(a, b []group) []Change {
	merge := func(gs []group) (map[string][]string, []string) {
		m := map[string][]string{}
		var order []string
		for _, g := range gs {
			if _, ok := m[g.key]; !ok {
				order = append(order, g.key)
				m[g.key] = []string{}
			}
			m[g.key] = append(m[g.key], g.lines...)
		}
		return m, order
	}
	am, aOrder := merge(a)
	bm, bOrder := merge(b)
	out := []Change{}
	for _, k := range aOrder {
		if _, ok := bm[k]; !ok {
			out = append(out, Change{Op: "-", Key: k})
		}
	}
	for _, k := range bOrder {
		old, ok := am[k]
		if !ok {
			out = append(out, Change{Op: "+", Key: k})
			continue
		}
		added, removed := setDiff(old, bm[k])
		if len(added)+len(removed) > 0 {
			out = append(out, Change{Op: "~", Key: k, Added: added, Removed: removed})
		}
	}
	return out
}

func setDiff(a, b []string) (added, removed []string) {
	in := func(xs []string) map[string]int {
		m := map[string]int{}
		for _, x := range xs {
			m[x]++
		}
		return m
	}
	am, bm := in(a), in(b)
	for _, x := range b {
		if am[x] > 0 {
			am[x]--
			continue
		}
		added = append(added, x)
	}
	for _, x := range a {
		if bm[x] > 0 {
			bm[x]--
			continue
		}
		removed = append(removed, x)
	}
	return added, removed
}
