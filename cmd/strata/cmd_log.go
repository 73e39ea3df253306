package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

type logOptions struct {
	Path     string
	Since    string
	Until    string
	N        int
	JSON     bool
	Rejected bool
	Patch    bool
	Keys     bool
}

func newLogCommand(e *env) *cli.Command {
	var o logOptions
	return &cli.Command{
		Name:      "log",
		Usage:     "list recorded changes, newest first",
		ArgsUsage: "[PATH]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only changes at or after `T` (RFC 3339 or '2h ago')", Destination: &o.Since,
				Action: func(_ *cli.Context, v string) error { return nonEmptyTime("--since", v) }},
			&cli.StringFlag{Name: "until", Usage: "only changes at or before `T`", Destination: &o.Until,
				Action: func(_ *cli.Context, v string) error { return nonEmptyTime("--until", v) }},
			&cli.IntFlag{Name: "n", Aliases: []string{"max-count"}, Usage: "at most `N` entries", Destination: &o.N},
			&cli.BoolFlag{Name: "rejected", Usage: "list refs/strata/rejected instead", Destination: &o.Rejected},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of {commit, time, path, action, source, class, schema?}", Destination: &o.JSON},
			&cli.BoolFlag{Name: "p", Aliases: []string{"patch"}, Usage: "show each change's diff against the version before it", Destination: &o.Patch},
			&cli.BoolFlag{Name: "keys", Usage: "with -p: key-level changes instead of lines (as diff --keys)", Destination: &o.Keys},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("log takes at most one PATH")
			}
			o.Path = c.Args().First()
			if c.IsSet("n") && o.N == 0 {
				return nil // git log -n 0: no entries (0 is not "no limit")
			}
			return runLog(e, o)
		},
	}
}

func runLog(e *env, o logOptions) error {
	if o.N < 0 {
		return usagef("-n must not be negative")
	}
	q := state.LogQuery{Limit: o.N}
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
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	if o.Path != "" {
		k, err := eng.ResolveRecorded(e.Dir, o.Path)
		if err != nil {
			return err
		}
		q.Path = k.Path
	}
	log := eng.Log
	if o.Rejected {
		log = eng.RejectedLog
	}
	entries, err := log(q)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return err
	}
	if entries == nil {
		entries = []state.Entry{}
	}
	if o.JSON {
		return writeJSON(e.Out, entries)
	}
	shown := map[string]bool{}
	for i, en := range entries {
		home := ""
		if en.Home {
			home = " [home]" // on the local home ref, not the state ref
		}
		home += provenanceText(en)
		if en.Action == state.ActionMerge {
			fmt.Fprintf(e.Out, "%s %s merge  (%s): no path changed here%s\n", state.ShortID(en.Commit), en.Time.Format(time.RFC3339), state.TermSafe(string(en.Source)), home)
		} else {
			fmt.Fprintf(e.Out, "%s %s %-6s %s (%s)%s\n", state.ShortID(en.Commit), en.Time.Format(time.RFC3339),
				state.TermSafe(string(en.Action)), state.ShownPath(en.Path), state.TermSafe(string(en.Source)), home)
			if o.Patch || o.Keys {
				printPatch(e, eng, en, o.Keys)
			}
		}
		last := i+1 == len(entries) || entries[i+1].Commit != en.Commit
		if en.Source == state.SourceSync && last && !shown[en.Commit] {
			shown[en.Commit] = true
			printMergeDecisions(e, eng, en.Commit, o.Path)
		}
	}
	return nil
}

// printMergeDecisions lists the paths a sync merge decided by timestamp (or kept
// local), under the merge's entries, with the command that brings a losing
// version back.
func printMergeDecisions(e *env, eng *engine.Engine, commit, path string) {
	ds, err := eng.MergeDecisions(commit)
	if err != nil {
		return
	}
	for _, d := range ds {
		if path != "" && d.Path != path {
			continue
		}
		switch {
		case d.Kept != "":
			fmt.Fprintf(e.Out, "           kept local %s: %s\n", state.ShownPath(d.Path), state.TermSafe(d.Kept))
			continue
		case d.Merged && d.Dropped != "":
			fmt.Fprintf(e.Out, "           merged %s: %s%s\n", state.ShownPath(d.Path), engine.MergedExcept, state.TermSafe(d.Dropped))
			continue
		case d.Merged:
			fmt.Fprintf(e.Out, "           merged %s: both sides' edits kept\n", state.ShownPath(d.Path))
			continue
		case d.KeptBoth != "":
			fmt.Fprintf(e.Out, "           kept both %s: the version recorded later is now %s\n", state.ShownPath(d.Path), state.TermSafe(d.KeptBoth))
			continue
		}
		fmt.Fprintf(e.Out, "           decided %s: later edit %s wins over %s (strata restore %s --rev %s)\n",
			state.ShownPath(d.Path), state.TermSafe(state.ShortID(d.Winner)), state.TermSafe(state.ShortID(d.Loser)), state.ShellWord(d.Path), state.ShellWord(d.Loser))
	}
}

// provenanceText is " session S, tool use T" for a version whose Claude Code
// session and tool call are known (Strata-Session, Strata-Tool-Use).
func provenanceText(en state.Entry) string {
	var parts []string
	if en.Session != "" {
		parts = append(parts, "session "+state.TermSafe(en.Session))
	}
	if en.ToolUse != "" {
		parts = append(parts, "tool use "+state.TermSafe(en.ToolUse))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}
