package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

type phaseOptions struct {
	Session string
	From    int
	JSON    bool
}

func newPhaseCommand(e *env) *cli.Command {
	var ro, lo phaseOptions
	return &cli.Command{
		Name:  "phase",
		Usage: "recover a phase-output session, or list sessions and their tiers",
		Subcommands: []*cli.Command{
			{
				Name:      "recover",
				Usage:     "the last contiguous completed tier of a session, its gaps, the next tier and the memory snapshot to restore",
				ArgsUsage: "SESSION",
				Description: `The last completed tier is the highest N such that tiers 1..N of
PhaseOutputs/SESSION are all present, valid and completed. Every tier up to
the highest present one that is not completed is a gap (missing, failed,
partial or invalid), reported rather than skipped. The memory snapshot to
restore is the last completed tier's memory_snapshot. --from N recovers as if
tiers above N did not exist. Invalid files are listed on stderr. Exit 1 when
the session does not exist.`,
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "from", Usage: "recover as if tiers above `N` (1..8) did not exist"},
					&cli.BoolFlag{Name: "json", Usage: "print one JSON object", Destination: &ro.JSON},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("phase recover takes exactly one SESSION (see strata phase list)")
					}
					ro.Session = c.Args().First()
					if ro.Session == "" {
						return usagef("phase recover: an empty SESSION; give a session's name (see strata phase list)")
					}
					if c.IsSet("from") {
						ro.From = c.Int("from")
						if ro.From < 1 || ro.From > 8 {
							return usagef("--from %d: want a tier from 1 to 8", ro.From)
						}
					}
					return runPhaseRecover(e, ro)
				},
			},
			{
				Name:      "list",
				Usage:     "phase-output sessions with their tiers and last contiguous completed tier",
				ArgsUsage: "[SESSION]",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "json", Usage: "print one JSON array", Destination: &lo.JSON},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() > 1 {
						return usagef("phase list takes at most one SESSION")
					}
					lo.Session = c.Args().First()
					if c.NArg() == 1 && lo.Session == "" {
						return usagef("phase list: an empty SESSION; give a session's name, or none to list them all")
					}
					return runPhaseList(e, lo)
				},
			},
		},
	}
}

// sessions reads the phase-output sessions, keeping only the named one
// when name is not empty, and returns the problems of the files kept.
func sessions(e *env, name string) ([]engine.Session, state.Problems, error) {
	eng, err := open(e)
	if err != nil {
		return nil, nil, err
	}
	files, problems, err := eng.PhaseFiles()
	if err != nil {
		return nil, nil, err
	}
	all := engine.Sessions(files)
	if name == "" {
		return all, problems, nil
	}
	name = strings.TrimSuffix(name, "/")
	for _, s := range all {
		if s.Name == name || s.Dir == name {
			var mine state.Problems
			for _, p := range problems {
				if strings.HasPrefix(p.Path, s.Dir+"/") {
					mine = append(mine, p)
				}
			}
			return []engine.Session{s}, mine, nil
		}
	}
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = state.TermSafe(s.Name)
	}
	known := "none"
	if len(names) > 0 {
		known = strings.Join(names, ", ")
	}
	return nil, nil, fmt.Errorf("session %q has no phase outputs (sessions: %s): %w", name, known, state.ErrNotFound)
}

func runPhaseRecover(e *env, o phaseOptions) error {
	ss, problems, err := sessions(e, o.Session)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		fmt.Fprintln(e.Err, problems.Error())
	}
	r := engine.Recover(ss[0].Name, ss[0].Tiers, o.From)
	if o.JSON {
		return writeJSON(e.Out, r)
	}
	fmt.Fprintf(e.Out, "session %s (%s)\n", state.TermSafe(r.Session), state.TermSafe(ss[0].Dir))
	if r.LastCompleted == 0 {
		fmt.Fprintln(e.Out, "last completed: none")
	} else {
		fmt.Fprintf(e.Out, "last completed: tier %d (%s)\n", r.LastCompleted, state.TermSafe(r.LastLabel))
	}
	for _, g := range r.Gaps {
		fmt.Fprintf(e.Out, "gap: tier %d (%s) %s\n", g.Phase, state.TermSafe(g.Label), state.TermSafe(g.Reason))
	}
	switch {
	case r.NextPhase == 0:
		fmt.Fprintln(e.Out, "next: none, every tier is completed")
	default:
		fmt.Fprintf(e.Out, "next: tier %d (%s)\n", r.NextPhase, state.TermSafe(r.NextLabel))
	}
	if r.SnapshotFrom == "" {
		fmt.Fprintln(e.Out, "memory snapshot: none, start fresh")
	} else {
		snap, _ := json.Marshal(r.MemorySnapshot)
		// JSON escapes C0 controls, not C1 ones nor bidi controls
		fmt.Fprintf(e.Out, "memory snapshot: %s from %s\n", state.TermSafe(string(snap)), state.TermSafe(r.SnapshotFrom))
	}
	if r.NextPhase != 0 {
		restore := ""
		if r.SnapshotFrom != "" {
			restore = fmt.Sprintf(" with the memory snapshot of tier %d", r.LastCompleted)
		}
		fmt.Fprintf(e.Out, "run next: tier %d %s%s, writing %s/phase-%02d-%s.json\n",
			r.NextPhase, state.TermSafe(r.NextLabel), restore, state.TermSafe(ss[0].Dir), r.NextPhase, state.TermSafe(r.NextLabel))
	}
	return nil
}

type sessionJSON struct {
	engine.Session
	LastCompleted int `json:"last_completed"`
}

func runPhaseList(e *env, o phaseOptions) error {
	ss, problems, err := sessions(e, o.Session)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		fmt.Fprintln(e.Err, problems.Error())
	}
	list := make([]sessionJSON, 0, len(ss))
	for _, s := range ss {
		list = append(list, sessionJSON{Session: s, LastCompleted: engine.Recover(s.Name, s.Tiers, 0).LastCompleted})
	}
	if o.JSON {
		return writeJSON(e.Out, list)
	}
	for _, s := range list {
		fmt.Fprintf(e.Out, "%s  last completed tier %d of 8 (%s)\n", state.TermSafe(s.Name), s.LastCompleted, state.TermSafe(s.Dir))
		for _, t := range s.Tiers {
			fmt.Fprintf(e.Out, "  %02d %-10s %s\n", t.Phase, state.TermSafe(t.Label), state.TermSafe(string(t.Status)))
		}
	}
	return nil
}
