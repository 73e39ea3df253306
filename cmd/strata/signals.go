package main

import "github.com/urfave/cli/v2"

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
