package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/semantic"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/textdiff"
)

// printPatch prints, indented under a log entry, how the entry changed its
// path against the version before it (the commit's first parent): a
// unified diff, or the key-level changes. What cannot be read is said in
// one line; the log goes on.
func printPatch(e *env, eng *engine.Engine, en state.Entry, keys bool) {
	var old, cur []byte
	if parent, err := eng.Commit(engine.Point{Rev: en.Commit + "^"}); err == nil {
		old, err = eng.FileAt(parent, en.Path)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			fmt.Fprintf(e.Out, "    (%s)\n", termSafe(err.Error()))
			return
		}
	}
	if en.Action != state.ActionDelete {
		var err error
		if cur, err = eng.FileAt(en.Commit, en.Path); err != nil {
			fmt.Fprintf(e.Out, "    (%s)\n", termSafe(err.Error()))
			return
		}
	}
	var text string
	if keys {
		kind, ok := semantic.KindOf(en.Path, en.Class)
		if !ok {
			fmt.Fprintln(e.Out, "    (no keys: not JSON, YAML, MEMORY.md or the memory graph)")
			return
		}
		changes, err := semantic.Diff(en.Path, kind, old, cur)
		if err != nil {
			fmt.Fprintf(e.Out, "    (%s)\n", termSafe(strings.SplitN(err.Error(), "\n", 2)[0]))
			return
		}
		for _, c := range changes {
			text += c.String() + "\n"
		}
	} else {
		a, b := "a/"+en.Path, "b/"+en.Path
		if old == nil {
			a = "/dev/null"
		}
		if cur == nil {
			b = "/dev/null"
		}
		text = textdiff.Unified(a, b, old, cur, 3)
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(e.Out, "    %s\n", termSafe(l))
		}
	}
}
