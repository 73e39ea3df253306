package engine

import "github.com/strata-dev/strata/state"

// CheckSchema validates a file's content with its schema only, without the
// rules that need history or other files. A sync uses it for a version it
// keeps beside another under a new name: the version was checked in full
// where it was written, and its new neighbour is the point of keeping both.
func (e *Engine) CheckSchema(f File) state.Problems {
	if !f.Exists {
		return nil
	}
	return e.V.Validate(f.Path, f.Content, f.Schema)
}
