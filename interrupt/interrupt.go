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
				<-sigs
				cancel()
				sig := <-sigs
				code := 130
				if sig == syscall.SIGTERM {
					code = 143
				}
				os.Exit(code)
			}()
		})
	}
	stop = func() { signal.Stop(sigs) }
	return catch, stop
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
