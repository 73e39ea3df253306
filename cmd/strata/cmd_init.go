package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

func newInitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "write a commented .strata.yaml and record the current valid state",
		Description: `Writes .strata.yaml with the defaults (commented out) when it does not exist,
and records every valid kept file: as the first commit of refs/strata/state
when nothing is recorded yet, as ordinary changes otherwise. Files that fail
their schema are listed and kept on refs/strata/rejected. Safe to run twice.`,
		Action: func(c *cli.Context) error { return runInit(e) },
	}
}

func runInit(e *env) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	res, err := eng.Init()
	if err != nil {
		return err
	}
	if res.ConfigWritten {
		fmt.Fprintf(e.Out, "wrote %s\n", config.FileName)
	}
	recorded, invalid := 0, 0
	for _, o := range res.Outcomes {
		if o.Entry != nil {
			recorded++
		}
		if o.Invalid() {
			invalid++
			fmt.Fprintln(e.Err, o.Problems.Error())
		}
	}
	head, err := eng.Head()
	if err != nil {
		return err
	}
	switch {
	case recorded > 0:
		fmt.Fprintf(e.Out, "recorded %d files on %s (%s)\n", recorded, eng.StateRef(), state.ShortID(head))
	case head != "":
		fmt.Fprintf(e.Out, "%s is up to date (%s)\n", eng.StateRef(), state.ShortID(head))
	default:
		fmt.Fprintf(e.Out, "no valid kept files yet; strata records them as they appear\n")
	}
	if invalid > 0 {
		fmt.Fprintf(e.Err, "%d files fail their schema (kept on %s). If they follow a shape of your own,\n"+
			"point `schema:` in %s at your own JSON Schema file, or use `schema: json`.\n",
			invalid, eng.RejectedRef(), config.FileName)
	}
	return nil
}
