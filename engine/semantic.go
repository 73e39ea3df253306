package engine

import (
	"errors"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/semantic"
	"github.com/strata-dev/strata/state"
)

// kindOf says how k is read structurally; a file of the user's own format
// is a *PathError (a usage error).
func kindOf(k config.Kept) (semantic.Kind, error) {
	kind, ok := semantic.KindOf(k.Path, k.Class)
	if !ok {
		return 0, &PathError{Path: k.Path, Reason: "not JSON, YAML, MEMORY.md or the memory graph: no keys to read"}
	}
	return kind, nil
}

// Blame gives each key of k's last recorded version (JSON/YAML pointers
// under pointer, graph observations, MEMORY.md lines) the commit that gave
// it its value, following restores back to the original commit.
func (e *Engine) Blame(k config.Kept, pointer string) ([]semantic.BlameLine, error) {
	kind, err := kindOf(k)
	if err != nil {
		return nil, err
	}
	if pointer == "/" {
		pointer = "" // the document root, as strata writes it everywhere (contract §11)
	}
	if pointer != "" {
		if kind != semantic.KindTree {
			return nil, &PathError{Path: k.Path, Reason: "a JSON Pointer applies to JSON and YAML files only"}
		}
		if err := semantic.CheckPointer(pointer); err != nil {
			return nil, &PathError{Path: k.Path, Reason: err.Error()}
		}
	}
	h, err := e.history(k.Path)
	if err != nil {
		return nil, err
	}
	defer h.close()
	return semantic.Blame(k.Path, kind, h, pointer)
}

// KeyDiff compares k as recorded at from with its version at to (the file
// on disk when to is nil), key by key. A path neither side holds is an
// error wrapping state.ErrNotFound, as in Diff.
func (e *Engine) KeyDiff(k config.Kept, from Point, to *Point) ([]semantic.Change, error) {
	kind, err := kindOf(k)
	if err != nil {
		return nil, err
	}
	to = e.recordedSide(k, to)
	found := 0 // sides holding the file
	side := func(p Point) ([]byte, error) {
		c, err := e.Commit(p)
		if err != nil {
			return nil, err
		}
		data, err := e.readAt(c, k.Path)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			found++
		}
		return data, nil
	}
	a, err := side(from)
	if err != nil {
		return nil, err
	}
	var b []byte
	if to == nil {
		f, p := e.Read(k)
		if p != nil {
			return nil, state.Problems{*p}
		}
		if f.Exists {
			b = f.Content
			found++
		}
	} else if b, err = side(*to); err != nil {
		return nil, err
	}
	if found == 0 {
		return nil, neither(k.Path, from, to)
	}
	return semantic.Diff(k.Path, kind, a, b)
}
