package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
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
		fmt.Fprintf(e.Out, "wrote %s\n", engine.ConfigFile)
	}
	recorded, invalid := 0, 0
	var hints []string
	for _, o := range res.Outcomes {
		if o.Entry != nil && o.Entry.Home {
			fmt.Fprintf(e.Out, "recorded %s on %s (%s; local, sync never pushes it)\n", state.TermSafe(o.Path), eng.HomeRef(), state.ShortID(o.Entry.Commit))
		} else if o.Entry != nil {
			recorded++
		}
		switch {
		case o.Invalid() && o.Rejected != nil: // read, and its content failed: a schema of the user's may fit
			invalid++
			fmt.Fprintln(e.Err, o.Problems.Error())
			hints = append(hints, fmt.Sprintf("  - {glob: %s, schema: %s}", o.Path, formatOf(o.Path)))
		case o.Invalid(): // not read at all (a link, a pipe, too large): nothing kept, no schema helps
			fmt.Fprintln(e.Err, o.Problems.Error())
		}
	}
	// Files kept but for a control character in their name: strata
	// validate fails on them, so init says so too (and still exits 0).
	bad, err := eng.BadNames()
	if err != nil {
		return err
	}
	for _, p := range bad {
		fmt.Fprintln(e.Err, p.Error())
	}
	printWithheld(e, eng)
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
			"point `schema:` in %s at your own JSON Schema file, or keep them as well-formed only:\n"+
			"files:\n%s\n",
			invalid, eng.RejectedRef(), engine.ConfigFile, strings.Join(hints, "\n"))
	}
	return nil
}

// formatOf is the well-formed-only schema that fits a file's format.
func formatOf(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml":
		return "yaml"
	case ".jsonl", ".ndjson":
		return "jsonl"
	case ".md", ".markdown":
		return "markdown"
	}
	return "json"
}

// printWithheld says which files a rule would keep but strata withholds as
// private, and how to keep one anyway.
func printWithheld(e *env, eng *engine.Engine) {
	for _, p := range eng.Withheld() {
		fmt.Fprintf(e.Out, "not kept (private: %s): %s; a %s rule naming it exactly keeps it\n", p.Reason, state.TermSafe(p.Path), engine.ConfigFile)
	}
}
