package main

import (
	"fmt"
	"io"
	"os"

	"github.com/strata-dev/strata/interrupt"
	"github.com/urfave/cli/v2"
)

// readOnlyCommands only read: killed by the first SIGINT or SIGTERM they
// leave nothing behind that matters (no ref lock, no half-moved ref, no
// kept file; at most the time index's cache lock or temporary file, which
// the next run ignores: gitstore.persistIndex), so they keep the operating
// system's default and start without os/signal's goroutine and thread
// (~0.5 ms of every call). Every other command catches the signals
// (interrupt.Catcher). validate is here for its plain form; its --hook form
// catches them only when it has to wait for stdin, and otherwise appends
// its provenance note with them ignored for that moment (hookstdin.go).
var readOnlyCommands = map[string]bool{
	"version":  true,
	"help":     true,
	"log":      true,
	"show":     true,
	"diff":     true,
	"status":   true,
	"at":       true,
	"blame":    true,
	"validate": true,
}

// catchSignalsBefore makes every command not in readOnlyCommands catch the
// signals before it runs (its subcommands included).
func catchSignalsBefore(e *env, c *cli.Command) {
	if readOnlyCommands[c.Name] {
		return
	}
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		e.catch()
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}

// catch installs the signal handler when the process has one to install
// (Main gives it; commands run in-process by tests have none).
func (e *env) catch() {
	if e.catchSignals != nil {
		e.catchSignals()
		e.caught = true
	}
}

// servers stop on the first SIGINT or SIGTERM as their work is done: a
// watcher after flushing its pending changes, a server after its last
// answer. They exit 0.
var servers = map[string]bool{"watch": true, "mcp": true, "timeline": true}

// interrupted is the exit code of a command that ended with code after a
// first SIGINT or SIGTERM (sig; nil when none came): a one-shot command
// stops at the end of the step under way (a record's or a restore's batch
// is one step: all of it or nothing), and then says so and exits 130 or
// 143, as a command a shell interrupted, so a script does not take it for
// a run that went as asked. A command that failed keeps its code, unless
// it failed because the signal stopped what it was running (stopped: a
// sync's git fetch or push, killed with the canceled context), which is
// an interruption too.
func interrupted(code int, cmd string, sig os.Signal, stopped error, w io.Writer) int {
	switch {
	case stopped != nil && sig != nil:
		fmt.Fprintf(w, "strata: %s interrupted (%s); what it was running stopped (%s); run it again\n", cmd, sig, stopped)
		return interrupt.ExitCode(sig)
	case stopped != nil:
		fmt.Fprintf(w, "strata: %s\n", stopped) // (canceled otherwise: never with Main's context)
		return code
	}
	if sig == nil || code != exitOK || servers[cmd] || readOnlyCommands[cmd] {
		return code
	}
	fmt.Fprintf(w, "strata: %s interrupted (%s); the step under way was finished first\n", cmd, sig)
	return interrupt.ExitCode(sig)
}
