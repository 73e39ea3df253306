package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/timeline"
)

type timelineOptions struct {
	Since string
	Out   string
	Serve string
}

func newTimelineCommand(e *env) *cli.Command {
	var o timelineOptions
	return &cli.Command{
		Name:  "timeline",
		Usage: "write the recorded history as one self-contained HTML page",
		Description: `Writes an HTML page (inline CSS and script, nothing fetched when viewed)
with one lane per layer (L1 files, L2 MEMORY.md, L3 graph) and per
phase-output session: workflow phases as spans, decisions (pending or
resolved with the choice), rejected versions in red, TTL expiries, sync
merges naming the losing side, restores. Enter or a click on an event shows
its diff. Without -o the page goes to stdout. --serve ADDR serves it on a
loopback address instead (built afresh on each reload) until interrupted;\nstrata-serve, installed with strata, serves it.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only changes at or after `T` (RFC 3339 or '2h ago')", Destination: &o.Since},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write the page to `FILE`", Destination: &o.Out},
			&cli.StringFlag{Name: "serve", Usage: "serve the page on loopback `ADDR` (127.0.0.1:PORT)", Destination: &o.Serve},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("timeline takes no arguments")
			}
			return runTimeline(e, o)
		},
	}
}

func runTimeline(e *env, o timelineOptions) error {
	var since time.Time
	if o.Since != "" {
		var err error
		if since, err = state.ParseTime(o.Since, e.Now()); err != nil {
			return usagef("--since: %v", err)
		}
	}
	if o.Serve != "" {
		if o.Out != "" {
			return usagef("timeline: --serve and -o cannot be used together")
		}
		if err := timeline.Loopback(o.Serve); err != nil {
			return usagef("--serve: %v", err)
		}
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	if o.Serve != "" {
		args := []string{"-dir", eng.Root(), "-addr", o.Serve}
		if !since.IsZero() {
			args = append(args, "-since", since.Format(time.RFC3339Nano))
		}
		return serveWith(e, "timeline", args...)
	}
	t, err := timeline.Build(eng, since)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := timeline.Render(&buf, t); err != nil {
		return err
	}
	if o.Out == "" {
		_, err = e.Out.Write(buf.Bytes())
		return err
	}
	if err := engine.WriteUserFile(o.Out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.Out, err)
	}
	fmt.Fprintf(e.Out, "wrote %s: %d events in %d lanes\n", o.Out, len(t.Events), len(t.Lanes))
	return nil
}
