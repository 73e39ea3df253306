// Command strata keeps the state files of AI-agent workflows valid,
// versioned and in sync inside any git repository.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-dev/strata/state"
)

func main() { os.Exit(Main()) }

// Main runs strata with the process's arguments and streams; testscript
// calls it in-process.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, _ := os.Getwd()
	return run(ctx, os.Args, &env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Dir: dir, Now: state.Now})
}
