package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
loopback address instead (built afresh on each reload) until interrupted.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only changes at or after `T` (RFC 3339 or '2h ago')", Destination: &o.Since},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write the page to `FILE`", Destination: &o.Out},
			&cli.StringFlag{Name: "serve", Usage: "serve the page on loopback `ADDR` (127.0.0.1:PORT)", Destination: &o.Serve},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("timeline takes no arguments")
			}
			return runTimeline(c.Context, e, o)
		},
	}
}

func runTimeline(ctx context.Context, e *env, o timelineOptions) error {
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
	build := func() (*timeline.Timeline, error) { return timeline.Build(eng, since) }
	if o.Serve != "" {
		return serveTimeline(ctx, e, o.Serve, build)
	}
	t, err := build()
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

// serveTimeline serves the page until ctx ends (an interrupt).
func serveTimeline(ctx context.Context, e *env, addr string, build func() (*timeline.Timeline, error)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: timeline.Handler(build), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.Out, "serving the timeline on http://%s/ (interrupt to stop)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
