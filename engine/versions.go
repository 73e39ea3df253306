package engine

import (
	"errors"
	"fmt"
	"iter"

	"github.com/strata-dev/strata/state"
)

// lazyHistory is a path's recorded versions, read back from the last one as
// far as they are asked for: a blame that stops early reads neither the
// older commits nor their bytes. close releases the walk.
type lazyHistory struct {
	e    *Engine
	path string
	ents []state.Entry // newest first, as far as read
	next func() (state.Entry, error, bool)
	stop func()
	err  error
}

// history opens path's versions, reading its last one. A path never
// recorded gives an error wrapping state.ErrNotFound.
func (e *Engine) history(path string) (*lazyHistory, error) {
	next, stop := iter.Pull2(e.store.LogSeq(e.store.StateRef(), state.LogQuery{Path: path}))
	h := &lazyHistory{e: e, path: path, next: next, stop: stop}
	if _, ok, err := h.Entry(0); err != nil || !ok {
		h.close()
		if err == nil || errors.Is(err, state.ErrNotFound) {
			err = fmt.Errorf("%s: never recorded: %w", path, state.ErrNotFound)
		}
		return nil, err
	}
	return h, nil
}

func (h *lazyHistory) close() { h.stop() }

// Entry is the i-th version back from the last (0); ok is false past the
// first one.
func (h *lazyHistory) Entry(i int) (state.Entry, bool, error) {
	for len(h.ents) <= i && h.err == nil && h.next != nil {
		e, err, ok := h.next()
		switch {
		case !ok:
			h.next = nil
		case err != nil:
			h.err = err
		default:
			h.ents = append(h.ents, e)
		}
	}
	if i < len(h.ents) {
		return h.ents[i], true, nil
	}
	return state.Entry{}, false, h.err
}

func (h *lazyHistory) Content(i int) ([]byte, error) {
	en := h.ents[i] // Entry(i) read it
	if en.Action == state.ActionDelete {
		return nil, nil
	}
	data, err := h.e.store.ReadFile(en.Commit, h.path)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", h.path, state.ShortID(en.Commit), err)
	}
	return data, nil
}
