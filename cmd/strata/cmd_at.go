package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
)

type atOptions struct {
	When string
	Rev  string
	JSON bool
}

func newAtCommand(e *env) *cli.Command {
	var o atOptions
	return &cli.Command{
		Name:      "at",
		Usage:     "show the agent's whole context as recorded at a past moment",
		ArgsUsage: "T",
		Description: `Reads the state ref as it was at T (RFC 3339, '2h ago', 'now', ...) or in
commit --rev R, never the disk: the resume report of that moment (workflow,
tier, pending decisions, the last completed tier of each phase-output
session), the L1 files, MEMORY.md against what Claude Code loads of it (the
first 200 lines or 25 KB, whichever comes first) with the entries past
that window by name, and the L3 entities. Ages are measured from T. It
writes nothing and expires nothing.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "rev", Usage: "the state in commit `R` instead of a time", Destination: &o.Rev},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error {
			switch {
			case c.NArg() > 1:
				return usagef("at takes one time T")
			case c.NArg() == 0 && o.Rev == "":
				return usagef("at needs a time T or --rev R")
			}
			o.When = c.Args().First()
			if c.NArg() == 1 {
				if err := nonEmptyTime("at", o.When); err != nil {
					return err
				}
			}
			return runAt(e, o)
		},
	}
}

func runAt(e *env, o atOptions) error {
	if o.When != "" && o.Rev != "" {
		return usagef("at: a time T and --rev cannot be used together")
	}
	var p engine.Point
	if o.When != "" {
		t, err := parseWhen(e, "at", o.When)
		if err != nil {
			return err
		}
		p.At = t
	} else {
		p.Rev = o.Rev
	}
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	c, err := atContext(eng, e, p)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Out, c)
	}
	printText(e, c.Text())
	return nil
}

func atContext(eng *engine.Engine, e *env, p engine.Point) (*layers.Context, error) {
	return layers.New(eng, func(msg string) { fmt.Fprintf(e.Err, "strata: %s\n", msg) }).At(p)
}
