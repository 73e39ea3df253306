package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

type blameOptions struct {
	Path    string
	Pointer string
	JSON    bool
}

func newBlameCommand(e *env) *cli.Command {
	var o blameOptions
	return &cli.Command{
		Name:      "blame",
		Usage:     "say which recorded change gave each key or line its current value",
		ArgsUsage: "PATH [POINTER]",
		Description: `For a JSON or YAML file, each key (each leaf JSON Pointer, or those at
or under POINTER) of the last recorded version; for MEMORY.md, each line;
for the memory graph, each observation and relation: with the commit, time
and source that gave it its value. A value a restore brought back blames
the commit that first wrote it, marked "restored".`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of {key|line, value, commit, time, source, restored}", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usagef("blame takes PATH and an optional JSON POINTER")
			}
			o.Path, o.Pointer = c.Args().Get(0), c.Args().Get(1)
			return runBlame(e, o)
		},
	}
}

func runBlame(e *env, o blameOptions) error {
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	k, err := eng.ResolveRecorded(e.Dir, o.Path)
	if err != nil {
		return err
	}
	lines, err := eng.Blame(k, o.Pointer)
	if err != nil {
		return err
	}
	if o.JSON {
		if lines == nil {
			lines = []engine.BlameLine{}
		}
		return writeJSON(e.Out, lines)
	}
	for _, l := range lines {
		fmt.Fprintln(e.Out, blameText(l))
	}
	return nil
}

// blameText is one line of `strata blame`: commit, time, source, then the
// key and value (or the line number and text).
func blameText(l engine.BlameLine) string {
	head := fmt.Sprintf("%s %s %-7s", state.ShortID(l.Commit), l.Time.Format(time.RFC3339), state.TermSafe(string(l.Source)))
	if l.Restored {
		head += fmt.Sprintf(" (restored by %s)", state.ShortID(l.RestoredBy))
	}
	head += provenanceText(state.Entry{Session: l.Session, ToolUse: l.ToolUse})
	if l.Key != "" && l.Value == "" { // a graph item: the key says it all
		return head + " " + state.TermSafe(l.Key)
	}
	if l.Key != "" {
		return fmt.Sprintf("%s %s: %s", head, state.TermSafe(l.Key), blameValue(l.Value))
	}
	return fmt.Sprintf("%s %4d) %s", head, l.Line, state.TermSafe(l.Value))
}

// blameValue is a key's value, compact JSON, as one printable line: a
// character a terminal would act on is written as its JSON escape
// (state.JSONSafe), so the value stays the JSON it is, quoted once, as
// encoding/json already writes an ESC ("a\u001bb"); attack24 G5: a U+202E,
// which encoding/json leaves as it is, made TermSafe quote the JSON text
// again ("\"plan\u202eevil\""). TermSafe stays the last word for a value
// that is not JSON text.
func blameValue(v string) string {
	return state.TermSafe(string(state.JSONSafe([]byte(v))))
}
