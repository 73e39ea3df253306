package main

import (
	"io"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/semantic"
	"github.com/strata-dev/strata/state"
)

// printKeyChanges prints key-level changes, one per line (a graph entity's
// or a section's lines indented under it), or as {path, changes}.
func printKeyChanges(e *env, path string, changes []engine.KeyChange, asJSON bool) error {
	if changes == nil {
		changes = []engine.KeyChange{}
	}
	if asJSON {
		return writeJSON(e.Out, map[string]any{"path": path, "changes": changes})
	}
	_, err := io.WriteString(e.Out, state.TermText(semantic.Text(changes)))
	return err
}
