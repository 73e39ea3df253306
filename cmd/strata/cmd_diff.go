package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

type diffOptions struct {
	Path string
	From string
	To   string
	JSON bool
	Keys bool
}

func newDiffCommand(e *env) *cli.Command {
	var o diffOptions
	return &cli.Command{
		Name:      "diff",
		Usage:     "show how a kept file changed between two moments",
		ArgsUsage: "PATH",
		Description: `Prints a unified diff of PATH. --from and --to each take a time (RFC 3339
or '2h ago') or a commit-ish. Without --from: the last recorded version.
Without --to: the file in the work tree. A side without the file is
/dev/null; a path neither side holds is exit 1, as show of it.

--keys compares structures instead of lines: for JSON and YAML each
changed JSON Pointer (/phase: "plan" → "implement", + /phases/2,
- /enforcement), ignoring key order and whitespace; for the memory graph
each entity or relation added, removed or with observations changed; for
MEMORY.md each section added, removed or with lines changed.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "old side: time `T` or commit-ish R", Destination: &o.From,
				Action: func(_ *cli.Context, v string) error { return nonEmptyRev("--from", v) }},
			&cli.StringFlag{Name: "to", Usage: "new side: time `T` or commit-ish R (default: the work tree)", Destination: &o.To,
				Action: func(_ *cli.Context, v string) error { return nonEmptyRev("--to", v) }},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document: path, from, to, changed, diff (with --keys: path, changes)", Destination: &o.JSON},
			&cli.BoolFlag{Name: "keys", Usage: "key-level changes: JSON Pointers for JSON/YAML, entities for the graph, sections for MEMORY.md", Destination: &o.Keys},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("diff takes exactly one PATH")
			}
			o.Path = c.Args().First()
			return runDiff(e, o)
		},
	}
}

// pointOf reads a --from/--to value: a time when it parses as one, else a revision.
func pointOf(e *env, s string) engine.Point {
	if t, err := state.ParseTime(s, e.Now()); err == nil {
		return engine.Point{At: t}
	}
	return engine.Point{Rev: s}
}

func runDiff(e *env, o diffOptions) error {
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	k, err := eng.ResolveRecorded(e.Dir, o.Path)
	if err != nil {
		return err
	}
	var to *engine.Point
	if o.To != "" {
		p := pointOf(e, o.To)
		to = &p
	}
	if o.Keys {
		changes, err := eng.KeyDiff(k, pointOf(e, o.From), to)
		if err != nil {
			return err
		}
		return printKeyChanges(e, k.Path, changes, o.JSON)
	}
	d, err := eng.Diff(k, pointOf(e, o.From), to)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Out, map[string]any{"path": k.Path, "from": d.From, "to": d.To, "changed": d.Text != "", "diff": d.Text})
	}
	_, err = io.WriteString(e.Out, state.TermDiff(d.Text)) // recorded text may come from a remote
	return err
}
