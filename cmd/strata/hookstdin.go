package main

import (
	"bytes"
	"io"
	"os"

	"github.com/strata-dev/strata/interrupt"
)

// readHookStdin reads validate --hook's stdin. When all of it is there
// already (Claude Code writes the JSON and closes the pipe; a file), it is
// read without waiting and the process keeps the default signal handling.
// Otherwise the hook may wait for it (hookStdinIdle), so it catches SIGINT
// and SIGTERM first: a second one ends the wait at once (exit 130 or 143).
func readHookStdin(e *env) ([]byte, error) {
	if f, ok := e.In.(*os.File); ok && e.catchSignals != nil {
		data, complete, err := drainReady(f, maxHookInput)
		if err != nil {
			return nil, err
		}
		if complete {
			return data, nil
		}
		e.catch()
		return readHookInput(io.MultiReader(bytes.NewReader(data), f), maxHookInput, hookStdinIdle, hookStdinTotal)
	}
	e.catch()
	return readHookInput(e.In, maxHookInput, hookStdinIdle, hookStdinTotal)
}

// writeHookNote runs the hook's one write (the provenance note, one line
// appended to a log, now and then a compaction of that log through a
// temporary file): as is when the signals are caught, else with them
// ignored for that moment, so an interrupt never leaves a temporary file
// behind.
func writeHookNote(e *env, write func() error) error {
	if e.caught || e.catchSignals == nil {
		return write()
	}
	return interrupt.Ignoring(write)
}
