package main

import (
	"fmt"
	"strings"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// printPatch prints, indented under a log entry, how the entry changed its
// path against the version before it: a unified diff, or the key-level
// changes. What cannot be read is said in one line; the log goes on.
func printPatch(e *env, eng *engine.Engine, en state.Entry, keys bool) {
	text, err := eng.Patch(en, keys)
	if err != nil {
		fmt.Fprintf(e.Out, "    (%s)\n", state.TermSafe(err.Error()))
		return
	}
	if keys {
		text = state.TermText(text)
	} else {
		text = state.TermDiff(text)
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(e.Out, "    %s\n", l)
		}
	}
}
