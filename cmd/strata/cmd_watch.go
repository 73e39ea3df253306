package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/daemon"
)

type watchOptions struct {
	Debounce  time.Duration
	Rescan    time.Duration
	LogFormat string
	Sync      string
	SyncEvery time.Duration
}

func newWatchCommand(e *env) *cli.Command {
	var o watchOptions
	return &cli.Command{
		Name:  "watch",
		Usage: "record every valid change of the kept files as it happens (foreground)",
		Description: `Takes the single-watcher lock in .git/strata/, records whatever changed
while no watcher ran, then follows file-system events. A file is read once it
has been quiet for --debounce; invalid versions are reported at once on stderr
(PATH:LINE:COL: POINTER: message) and kept on refs/strata/rejected. SIGINT and
SIGTERM flush pending changes before exit. A second watcher exits 3 naming the
running one's pid. It reloads .strata.yaml, and the schema files its rules
name, when they change (restart it after editing a file a schema only $refs);
it exits 3 when its work tree or git directory is removed under it.
With --sync REMOTE it also runs strata sync with REMOTE every --sync-interval
and after recorded changes settle, in the background; a remote that is down
is retried with exponential backoff (up to 5 minutes) and reported by
strata status.`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "debounce", Value: 50 * time.Millisecond, Usage: "quiet time before a changed file is read", Destination: &o.Debounce},
			&cli.DurationFlag{Name: "rescan", Value: 60 * time.Second, Usage: "period of the full rescan that catches dropped events", Destination: &o.Rescan},
			&cli.StringFlag{Name: "sync", Usage: "also sync with `REMOTE` (a remote name, URL or path)", Destination: &o.Sync},
			&cli.DurationFlag{Name: "sync-interval", Value: 30 * time.Second, Usage: "period of --sync", Destination: &o.SyncEvery},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json", Destination: &o.LogFormat},
		},
		Action: func(c *cli.Context) error { return runWatch(c.Context, e, o) },
	}
}

func runWatch(ctx context.Context, e *env, o watchOptions) error {
	var h slog.Handler
	switch o.LogFormat {
	case "text":
		h = slog.NewTextHandler(e.Err, nil)
	case "json":
		h = slog.NewJSONHandler(jsonLines{e.Err}, nil)
	default:
		return usagef("--log-format must be text or json")
	}
	if o.Debounce <= 0 {
		return usagef("--debounce must be positive")
	}
	if o.SyncEvery <= 0 {
		return usagef("--sync-interval must be positive")
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	return daemon.Run(ctx, eng, daemon.Options{
		SyncRemote:   o.Sync,
		SyncInterval: o.SyncEvery,
		Debounce:     o.Debounce,
		Rescan:       o.Rescan,
		Logger:       slog.New(h),
		Problems:     e.Err,
	})
}
