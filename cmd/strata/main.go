// Command strata keeps the state files of AI-agent workflows valid,
// versioned and in sync inside any git repository.
package main

import (
	"context"
	"os"

	"github.com/strata-dev/strata/interrupt"
	"github.com/strata-dev/strata/state"
)

func main() { growStack(); os.Exit(Main()) }

// Main runs strata with the process's arguments and streams; testscript
// calls it in-process. A command that writes or runs long catches SIGINT
// and SIGTERM: the first cancels its context, so it stops cleanly (a
// watcher flushes its pending changes), a second ends the process at once,
// whatever it is blocked on. A command that only reads keeps the default
// (signals.go).
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	catch, stop := interrupt.Catcher(cancel)
	defer stop()
	dir, _ := os.Getwd()
	e := &env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Dir: dir, Now: state.Now, catchSignals: catch, exec: execProcess}
	code := run(ctx, os.Args, e)
	return interrupted(code, commandName(os.Args), interrupt.Caught(), e.stopped, os.Stderr)
}
