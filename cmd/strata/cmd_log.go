package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

type logOptions struct {
	Path     string
	Since    string
	Until    string
	N        int
	JSON     bool
	Rejected bool
}

func newLogCommand(e *env) *cli.Command {
	var o logOptions
	return &cli.Command{
		Name:      "log",
		Usage:     "list recorded changes, newest first",
		ArgsUsage: "[PATH]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only changes at or after `T` (RFC 3339 or '2h ago')", Destination: &o.Since},
			&cli.StringFlag{Name: "until", Usage: "only changes at or before `T`", Destination: &o.Until},
			&cli.IntFlag{Name: "n", Aliases: []string{"max-count"}, Usage: "at most `N` entries", Destination: &o.N},
			&cli.BoolFlag{Name: "rejected", Usage: "list refs/strata/rejected instead", Destination: &o.Rejected},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of {commit, time, path, action, source, class}", Destination: &o.JSON},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("log takes at most one PATH")
			}
			o.Path = c.Args().First()
			return runLog(e, o)
		},
	}
}

func runLog(e *env, o logOptions) error {
	if o.N < 0 {
		return usagef("-n must not be negative")
	}
	q := gitstore.LogQuery{Limit: o.N}
	var err error
	if o.Since != "" {
		if q.Since, err = state.ParseTime(o.Since, e.Now()); err != nil {
			return usagef("--since: %v", err)
		}
	}
	if o.Until != "" {
		if q.Until, err = state.ParseTime(o.Until, e.Now()); err != nil {
			return usagef("--until: %v", err)
		}
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	if o.Path != "" {
		k, err := eng.Resolve(e.Dir, o.Path)
		if err != nil {
			return err
		}
		q.Path = k.Path
	}
	ref := eng.Store.StateRef()
	if o.Rejected {
		ref = eng.Store.RejectedRef()
	}
	entries, err := eng.Store.Log(ref, q)
	if err != nil && !errorsIsNotFound(err) {
		return err
	}
	if entries == nil {
		entries = []state.Entry{}
	}
	if o.JSON {
		return writeJSON(e.Out, entries)
	}
	for _, en := range entries {
		fmt.Fprintf(e.Out, "%s %s %-6s %s (%s)\n", short(en.Commit), en.Time.Format(time.RFC3339), en.Action, en.Path, en.Source)
	}
	return nil
}
