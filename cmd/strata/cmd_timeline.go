package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/timeline/loopback"
)

type timelineOptions struct {
	Since string
	Out   string
	Serve string
	Home  bool
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
its diff. A page embeds at most 10 000 diffs, 2 MiB in all, from 256 MiB of
versions read; the later events name the command that prints theirs, and
the page says from when (--since that time gives the rest). Without -o the
page goes to stdout. --serve ADDR serves it on a loopback address instead
until interrupted, built again on a reload when the history moved, at the
address it prints: that holds a token made for the run, without which
(another user of this machine) a request gets 403. It refuses what another
web site's page asks of it (403) too, so open it from the address bar. The home ref's events (this machine's auto-memory file,
~/.claude/projects/<key>/memory/MEMORY.md, which strata never pushes) are
left out unless --home is given; the page then says it holds them.
strata-serve, installed with strata, builds and serves the page.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only changes at or after `T` (RFC 3339 or '2h ago')", Destination: &o.Since,
				Action: func(_ *cli.Context, v string) error { return nonEmptyTime("--since", v) }},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write the page to `FILE` (missing folders are created)", Destination: &o.Out},
			&cli.StringFlag{Name: "serve", Usage: "serve the page on loopback `ADDR` (127.0.0.1:PORT)", Destination: &o.Serve},
			&cli.BoolFlag{Name: "home", Usage: "include the home ref's events: the local auto-memory file, with its content", Destination: &o.Home},
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
		if err := loopback.Check(o.Serve); err != nil {
			return usagef("--serve: %v", err)
		}
	}
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	// strata-serve builds and writes the page (or serves it): strata, which
	// every hook call starts, does not link html/template.
	args := []string{"-dir", eng.Root()}
	if !since.IsZero() {
		args = append(args, "-since", since.Format(time.RFC3339Nano))
	}
	if o.Home {
		args = append(args, "-home")
	}
	if o.Serve != "" {
		return serveWith(e, "timeline", append(args, "-addr", o.Serve)...)
	}
	if o.Out != "" {
		args = append(args, "-o", o.Out)
	}
	return serveWith(e, "page", args...)
}
