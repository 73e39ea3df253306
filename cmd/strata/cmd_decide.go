package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
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
	// a resolution is YAML, which holds UTF-8 only: a flag in another
	// encoding (Latin-1 from an old terminal) is the user's to fix
	if !utf8.ValidString(o.Note) {
		return usagef("--note is not UTF-8 text; a resolution is YAML, which holds only UTF-8: write the note in UTF-8")
	}
	if !utf8.ValidString(o.By) {
		return usagef("--by is not UTF-8 text; a resolution is YAML, which holds only UTF-8: write the name in UTF-8")
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	if o.By == "" {
		var from string
		o.By, from = whoAmI(eng.Root())
		if !utf8.ValidString(o.By) {
			return usagef("%s is not UTF-8 text, and decide writes it as by: in a resolution, which YAML holds only in UTF-8: set it in UTF-8, or pass --by NAME", from)
		}
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

// whoAmI is git config user.name in the repository, else $USER, and
// which of them it is, as a refusal names it.
func whoAmI(root string) (name, from string) {
	cmd := gitstore.Command(exec.Command("git", "config", "user.name"), root)
	if out, err := cmd.Output(); err == nil {
		if name := strings.TrimSpace(string(out)); name != "" {
			return name, "git config user.name"
		}
	}
	return os.Getenv("USER"), "$USER"
}
