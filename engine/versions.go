package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/state"
)

// Version is one recorded version of a kept file: the entry that recorded
// it and its bytes (none for a deletion).
type Version struct {
	state.Entry
	Content []byte
}

// Versions lists every recorded version of path along the state ref's
// first-parent chain, oldest first. A path never recorded gives an error
// wrapping state.ErrNotFound.
func (e *Engine) Versions(path string) ([]Version, error) {
	ents, err := e.store.Log(e.store.StateRef(), state.LogQuery{Path: path})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, fmt.Errorf("%s: never recorded: %w", path, state.ErrNotFound)
	}
	slices.Reverse(ents)
	out := make([]Version, 0, len(ents))
	for _, en := range ents {
		v := Version{Entry: en}
		if en.Action != state.ActionDelete {
			if v.Content, err = e.store.ReadFile(en.Commit, path); err != nil {
				return nil, fmt.Errorf("%s at %s: %w", path, state.ShortID(en.Commit), err)
			}
		}
		out = append(out, v)
	}
	return out, nil
}
