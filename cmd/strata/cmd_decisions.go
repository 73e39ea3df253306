package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type decisionsOptions struct {
	Feature string
	JSON    bool
}

func newDecisionsCommand(e *env) *cli.Command {
	var o decisionsOptions
	return &cli.Command{
		Name:  "decisions",
		Usage: "pending decisions of the Phase Outcomes; exit 1 while a blocking one is unresolved",
		Description: `Lists every pending decision (one without a resolution file) of the Phase
Outcomes under PhaseOutcomes/, or of one feature, with its question, options,
recommendation and whether it blocks, and counts the in-scope-blocking
findings. A decision without "blocking" blocks; a finding without
"proposed_category" is in-scope-blocking. Recorded Phase Outcomes are read as
recorded. Exit 1 while a blocking decision is unresolved or a Phase Outcome is
invalid (it may hide one), so it can gate a pipeline.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "feature", Usage: "only the Phase Outcomes of `FEATURE`", Destination: &o.Feature},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("decisions takes no arguments (use --feature)")
			}
			return runDecisions(e, o)
		},
	}
}

type decisionsJSON struct {
	Pending         []engine.PendingDecision `json:"pending"`
	Blocking        int                      `json:"blocking"`
	InScopeBlocking int                      `json:"in_scope_blocking_findings"`
	Resolved        int                      `json:"resolved"`
	Problems        state.Problems           `json:"problems"`
}

func runDecisions(e *env, o decisionsOptions) error {
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	var dirs []string
	if o.Feature != "" {
		d, err := eng.FeatureDir(o.Feature)
		if err != nil {
			return err
		}
		dirs = []string{d}
	} else if dirs, err = eng.FolderDirs(); err != nil {
		return err
	}
	out := decisionsJSON{Pending: []engine.PendingDecision{}, Problems: state.Problems{}}
	for _, d := range dirs {
		f, ps, err := eng.Folder(d)
		if err != nil {
			return err
		}
		out.Problems = append(out.Problems, ps...)
		out.Resolved += len(f.Resolutions)
		out.InScopeBlocking += f.InScopeBlocking()
		for _, dc := range f.Pending() {
			out.Pending = append(out.Pending, dc)
			if dc.Blocking {
				out.Blocking++
			}
		}
	}
	if o.JSON {
		if err := writeJSON(e.Out, out); err != nil {
			return err
		}
	} else {
		if len(out.Problems) > 0 {
			fmt.Fprintln(e.Err, out.Problems.Error())
		}
		for _, d := range out.Pending {
			blocks := "non-blocking"
			if d.Blocking {
				blocks = "blocking"
			}
			// A Phase Outcome may come from another machine: its text is
			// quoted when a terminal would act on it, and the command is
			// one shell word per value.
			options := make([]string, len(d.Options))
			for i, o := range d.Options {
				options[i] = state.TermSafe(o)
			}
			fmt.Fprintf(e.Out, "%s %s [%s] %s: %s\n", state.TermSafe(d.Feature), state.TermSafe(d.ID), blocks, state.TermSafe(d.Outcome), state.TermSafe(d.Question))
			fmt.Fprintf(e.Out, "  options: %s; recommended: %s\n", strings.Join(options, ", "), state.TermSafe(d.Recommended))
			fmt.Fprintf(e.Out, "  decide: %s\n", layers.DecideCommand(d.ID, d.Recommended, d.Folder()))
		}
		fmt.Fprintf(e.Out, "%d pending (%d blocking), %d resolved, %d in-scope-blocking findings\n",
			len(out.Pending), out.Blocking, out.Resolved, out.InScopeBlocking)
	}
	switch {
	case out.Blocking > 0:
		noun := "decisions"
		if out.Blocking == 1 {
			noun = "decision"
		}
		fmt.Fprintf(e.Err, "strata: %d blocking %s unresolved; resolve with strata decide\n", out.Blocking, noun)
		return errReported
	case out.Problems.Invalid():
		fmt.Fprintln(e.Err, "strata: a Phase Outcome or resolution is invalid; it may hide a blocking decision")
		return errReported
	}
	return nil
}
