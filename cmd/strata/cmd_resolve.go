package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type resolveOptions struct {
	DryRun bool
	JSON   bool
}

func newResolveCommand(e *env) *cli.Command {
	var o resolveOptions
	return &cli.Command{
		Name:  "resolve",
		Usage: "make the layers agree: the newest of L1 (state file) and L3 (memory graph) wins",
		Description: `For the workflow state and the initiative, takes the time of each layer's
last change (the commit that recorded its current version on refs/strata/state,
else the document's own lastUpdated / "updated:"), picks the newest of L1 and
L3, warns about layers more than 5 minutes apart, and rewrites the stale layer
to match; each rewrite is recorded with source resolve. A rewrite of L1 is
validated first (schema and the initiative status machine) and refused when
invalid. L2 (MEMORY.md) is shown but never authoritative.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "show the decisions, change nothing", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error { return runResolve(e, o) },
	}
}

func runResolve(e *env, o resolveOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	out, err := layers.New(eng, nil).Resolve(o.DryRun, func(line string) { fmt.Fprintln(e.Err, line) })
	if err != nil && !errors.Is(err, layers.ErrUnavailable) {
		return err
	}
	if o.JSON {
		if werr := writeJSON(e.Out, map[string]any{"dry_run": o.DryRun, "decisions": out}); werr != nil {
			return werr
		}
	} else {
		printDecisions(e, out)
	}
	for _, r := range out {
		if r.Result == "refused" {
			return errReported
		}
	}
	return err // L3 unavailable: exit 3 after the table
}

func printDecisions(e *env, ds []layers.Resolution) {
	tw := tabwriter.NewWriter(e.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ITEM\tWINNER\tL1\tL2\tL3\tACTION")
	for _, d := range ds {
		winner := string(d.Winner)
		if winner == "" {
			winner = "-"
		}
		cols := []string{d.Item, winner}
		for _, lt := range d.Layers {
			cols = append(cols, layers.LayerCell(lt))
		}
		if len(d.Layers) == 0 { // refused before the layers were read
			cols = append(cols, "-", "-", "-")
		}
		if d.L3Other != "" {
			cols[4] = "another repository's"
		}
		var acts []string
		for _, a := range d.Actions {
			acts = append(acts, a.String())
		}
		action := "none (in sync)"
		switch {
		case d.Result == "refused" && len(acts) == 0:
			action = "refused (below)"
		case d.Result == "refused":
			action = "refused: " + strings.Join(acts, ", ")
		case len(acts) > 0 && d.Result == "dry-run":
			action = "would " + strings.Join(acts, ", ")
		case len(acts) > 0:
			action = strings.Join(acts, ", ")
		case d.Result == "unavailable":
			action = "none (L3 unavailable)"
		case d.Winner == "":
			action = "none (absent)"
		}
		cols = append(cols, action)
		for i, c := range cols { // the layers' values may come from a remote
			cols[i] = state.TermSafe(c)
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()
	for _, d := range ds {
		if d.Result == "refused" && len(d.Actions) == 0 { // its L1 file could not be read: say why
			for _, p := range d.Problems {
				fmt.Fprintln(e.Err, p.Error())
			}
		}
		if d.Result == "dry-run" {
			for _, w := range d.Warnings {
				fmt.Fprintf(e.Err, "strata: warning: %s\n", w)
			}
		}
	}
}
