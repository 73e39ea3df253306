package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/doctor"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

type doctorOptions struct{ JSON bool }

func newDoctorCommand(e *env) *cli.Command {
	var o doctorOptions
	return &cli.Command{
		Name:  "doctor",
		Usage: "diagnose this repository's strata setup and say how to fix each finding",
		Description: `Checks strata's and git's versions, strata-serve beside strata or on PATH
(servers: strata mcp and strata timeline --serve need it), .strata.yaml, the
kept files, the watcher, the pre-commit hook, Claude Code's hooks and strata
on PATH, the layers and tier, strata's refs (git fsck), loose objects,
linked worktrees, sync remotes and private files a rule matches. One line
per finding: LEVEL CHECK: message, then "fix: ..." when there is something
to do. Levels: ok, info, warn, fail. Exit 1 when a finding is fail (the user
must act).`,
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {ok, findings: [{check, level, message, fix?}]} (fix only when there is one)", Destination: &o.JSON}},
		Action: func(c *cli.Context) error { return runDoctor(c, e, o) },
	}
}

func runDoctor(c *cli.Context, e *env, o doctorOptions) error {
	opts := doctor.Options{Version: version(), Now: e.Now}
	opts.Companion, opts.CompanionErr = findCompanion()
	fs := doctor.Setup(c.Context, opts)
	eng, err := openRead(e)
	var ce *engine.ConfigError
	var cre *engine.ConfigReadError
	var oe *state.OwnershipError
	var fe *gitstore.FormatError
	switch {
	case errors.As(err, &ce):
		fs = append(fs, doctor.Config(ce))
	case errors.As(err, &cre):
		fs = append(fs, doctor.Config(cre))
	case errors.As(err, &oe):
		fs = append(fs, doctor.Ownership(oe))
	case errors.As(err, &fe):
		fs = append(fs, doctor.Format(fe))
	case err != nil:
		return err
	default:
		fs = append(fs, doctor.Repository(c.Context, eng, opts)...)
	}
	bad := doctor.NeedsUser(fs)
	if o.JSON {
		if err := writeJSON(e.Out, map[string]any{"ok": !bad, "findings": fs}); err != nil {
			return err
		}
	} else {
		for _, f := range fs {
			fmt.Fprintf(e.Out, "%-4s %s: %s\n", f.Level, f.Check, f.Message)
			if f.Fix != "" {
				fmt.Fprintf(e.Out, "     fix: %s\n", f.Fix)
			}
		}
	}
	if bad {
		return errReported
	}
	return nil
}
