// Package interrupt is how a strata process that writes or serves reacts to
// SIGINT and SIGTERM: the first cancels its context, so it stops cleanly (a
// watcher flushes its pending changes, a server shuts down), and a second
// ends the process at once, with exit 130 or 143, whatever it is blocked on.
// strata and strata-serve both use it.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// Catcher returns catch, which installs that handling (once, however often
// it is called; until then the process keeps the system's default), and
// stop, which undoes it.
func Catcher(cancel context.CancelFunc) (catch, stop func()) {
	var once sync.Once
	sigs := make(chan os.Signal, 2)
	catch = func() {
		once.Do(func() {
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			go func() {
				first := <-sigs
				caught.Store(&first)
				cancel()
				os.Exit(ExitCode(<-sigs))
			}()
		})
	}
	stop = func() { signal.Stop(sigs) }
	return catch, stop
}

// caught is the first signal a Catcher caught.
var caught atomic.Pointer[os.Signal]

// Caught returns the first signal a Catcher caught (SIGINT or SIGTERM), nil
// when none was; ExitCode gives its exit code.
func Caught() os.Signal {
	if s := caught.Load(); s != nil {
		return *s
	}
	return nil
}

// ExitCode is the exit code of a process that sig ended: 130 for SIGINT,
// 143 for SIGTERM, as a shell reports them.
func ExitCode(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return 143
	}
	return 130
}

// Ignoring runs f with SIGINT and SIGTERM ignored, then gives them back
// their default. It is for a process that keeps the default (it never
// called catch) and writes for a moment: a signal in that moment is dropped
// and the process ends right after, as a caught first signal would let it,
// without os/signal's goroutine and thread.
func Ignoring(f func() error) error {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	defer signal.Reset(os.Interrupt, syscall.SIGTERM)
	return f()
}
