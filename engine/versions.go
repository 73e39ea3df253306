package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/state"
)

// lazyHistory is a path's recorded versions whose bytes are read when asked
// for (a blame reads only as far back as it needs).
type lazyHistory struct {
	e    *Engine
	path string
	ents []state.Entry // oldest first
}

// history lists path's versions, oldest first, reading no content yet. A
// path never recorded gives an error wrapping state.ErrNotFound.
func (e *Engine) history(path string) (*lazyHistory, error) {
	ents, err := e.store.Log(e.store.StateRef(), state.LogQuery{Path: path})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, fmt.Errorf("%s: never recorded: %w", path, state.ErrNotFound)
	}
	slices.Reverse(ents)
	return &lazyHistory{e: e, path: path, ents: ents}, nil
}

func (h *lazyHistory) Len() int                { return len(h.ents) }
func (h *lazyHistory) Entry(i int) state.Entry { return h.ents[i] }

func (h *lazyHistory) Content(i int) ([]byte, error) {
	en := h.ents[i]
	if en.Action == state.ActionDelete {
		return nil, nil
	}
	data, err := h.e.store.ReadFile(en.Commit, h.path)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", h.path, state.ShortID(en.Commit), err)
	}
	return data, nil
}
