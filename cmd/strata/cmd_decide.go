package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

type decideOptions struct {
	ID      string
	Choice  string
	Feature string
	By      string
	Note    string
}

func newDecideCommand(e *env) *cli.Command {
	var o decideOptions
	return &cli.Command{
		Name:      "decide",
		Usage:     "resolve a pending decision: write the next numbered resolution file and record it",
		ArgsUsage: "DECISION-ID CHOICE",
		Description: `Writes PhaseOutcomes/FEATURE/NNN-resolution-DECISION-ID.yaml (NNN: the highest
number in the folder plus one) with resolves, outcome, choice, by, at and note,
and records it. Nothing is written when the decision does not exist, CHOICE is
not one of its options, or it is already resolved (exit 1). --by defaults to
git config user.name, then $USER.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "feature", Usage: "the feature folder under PhaseOutcomes/ (required)", Destination: &o.Feature},
			&cli.StringFlag{Name: "by", Usage: "who decides (default: git config user.name, then $USER)", Destination: &o.By},
			&cli.StringFlag{Name: "note", Usage: "why, in a few words", Destination: &o.Note},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("decide takes DECISION-ID and CHOICE (see strata decisions)")
			}
			if o.Feature == "" {
				return usagef("decide needs --feature FEATURE (see strata decisions)")
			}
			o.ID, o.Choice = c.Args().Get(0), c.Args().Get(1)
			return runDecide(e, o)
		},
	}
}

func runDecide(e *env, o decideOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	if o.By == "" {
		o.By = whoAmI(eng.Root())
	}
	if o.By == "" {
		return usagef("cannot tell who decides: set git config user.name or pass --by NAME")
	}
	res, err := eng.Decide(engine.Decision{Feature: o.Feature, ID: o.ID, Choice: o.Choice, By: o.By, Note: o.Note})
	if err != nil {
		return err
	}
	commit := "unchanged"
	if res.Entry != nil {
		commit = state.ShortID(res.Entry.Commit)
	}
	fmt.Fprintf(e.Out, "%s: %s resolved as %q (%s)\n", state.ShownPath(res.Path), state.TermSafe(o.ID), o.Choice, commit)
	return nil
}

// whoAmI is git config user.name in the repository, else $USER.
func whoAmI(root string) string {
	cmd := exec.Command("git", "config", "user.name")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		if name := strings.TrimSpace(string(out)); name != "" {
			return name
		}
	}
	return os.Getenv("USER")
}
