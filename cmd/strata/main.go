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
// calls it in-process. SIGINT or SIGTERM cancels the command's context, so
// it stops cleanly (a watcher flushes its pending changes); a second one
// ends the process at once, whatever it is blocked on.
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		cancel()
		sig := <-sigs
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	dir, _ := os.Getwd()
	return run(ctx, os.Args, &env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Dir: dir, Now: state.Now})
}
