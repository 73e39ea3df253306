package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

type restoreOptions struct {
	Paths []string
	All   bool
	At    string
	Rev   string
	JSON  bool
}

func newRestoreCommand(e *env) *cli.Command {
	var o restoreOptions
	return &cli.Command{
		Name:      "restore",
		Usage:     "put kept files back as they were recorded",
		ArgsUsage: "PATH... | --all",
		Description: `Writes each PATH as recorded at --at T, in --rev R (a commit of
refs/strata/state or of your own branches), or by default its last recorded
version; atomically, and records the restored version with source restore.
--all --at T puts the whole kept state back as of T (files that did not exist
then are removed). Paths outside the kept files, "..", absolute paths and
symlinks are refused and nothing is written.`,
		Flags: append(pointFlags(&o.At, &o.Rev),
			&cli.BoolFlag{Name: "all", Usage: "restore every kept file", Destination: &o.All},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
		),
		Action: func(c *cli.Context) error {
			o.Paths = c.Args().Slice()
			return runRestore(e, o)
		},
	}
}

func runRestore(e *env, o restoreOptions) error {
	switch {
	case o.All && len(o.Paths) > 0:
		return usagef("restore takes PATHs or --all, not both")
	case !o.All && len(o.Paths) == 0:
		return usagef("restore needs PATH... or --all")
	case o.All && o.At == "" && o.Rev == "":
		return usagef("restore --all needs --at T or --rev R")
	}
	p, err := parsePoint(e, o.At, o.Rev)
	if err != nil {
		return err
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	var outs []engine.Outcome
	if o.All {
		outs, err = eng.RestoreAll(p)
	} else {
		kept, rerr := resolvePaths(eng, e, o.Paths)
		if rerr != nil {
			return rerr
		}
		outs, err = eng.Restore(kept, p)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		reportOutcomes(e, eng, outs, true)
		return nil
	}
	n := 0
	for _, out := range outs {
		if out.Saved != nil && out.Written {
			where := ""
			if out.SavedRejected {
				where = " on " + eng.RejectedRefOf(out.Saved) + ", invalid"
			}
			fmt.Fprintf(e.Out, "saved the unrecorded %s first (%s%s)\n", out.Path, state.ShortID(out.Saved.Commit), where)
		}
		switch {
		case out.Entry != nil && out.Entry.Action == state.ActionDelete:
			n++
			fmt.Fprintf(e.Out, "deleted %s (not recorded at %s) (%s)\n", out.Path, p, state.ShortID(out.Entry.Commit))
		case out.Entry != nil:
			n++
			fmt.Fprintf(e.Out, "restored %s from %s (%s)\n", out.Path, p, state.ShortID(out.Entry.Commit))
		case out.Written:
			// Written back, but equal to the recorded head (it had been
			// overwritten by an unrecorded or rejected version): no new commit.
			n++
			fmt.Fprintf(e.Out, "restored %s from %s\n", out.Path, p)
		}
	}
	if n == 0 {
		fmt.Fprintf(e.Out, "nothing to restore: the files already match %s\n", p)
	}
	return nil
}
