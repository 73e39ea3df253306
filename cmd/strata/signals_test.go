package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// Commands that only read keep the default signal handling (no os/signal
// goroutine at start); every command that writes or runs long, and validate
// --hook (it writes a provenance note), catches SIGINT and SIGTERM.
func TestSignalsCaughtOnlyWhereNeeded(t *testing.T) {
	dir := t.TempDir() // not a repository: the commands fail after Before ran
	for _, tc := range []struct {
		args  string
		catch bool
	}{
		{"version", false},
		{"help", false},
		{"--help", false},
		{"log", false},
		{"show x", false},
		{"status", false},
		{"validate", false},
		{"validate --hook", true},
		{"record", true},
		{"init", true},
		{"watch", true},
		{"sync", true},
		{"restore x", true},
		{"timeline", true},
		{"mcp", true},
		{"claude install", true},
		{"hooks install", true},
	} {
		caught := false
		e := &env{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Dir: dir, Now: time.Now,
			catchSignals: func() { caught = true }}
		run(context.Background(), append([]string{"strata"}, strings.Fields(tc.args)...), e)
		if caught != tc.catch {
			t.Errorf("strata %s: signals caught %v, want %v", tc.args, caught, tc.catch)
		}
	}
}

// Every name in readOnlyCommands is a command: a rename cannot silently
// leave a stale entry.
func TestReadOnlyCommandsExist(t *testing.T) {
	app := newApp(&env{})
	for name := range readOnlyCommands {
		if findCommand(app.Commands, name) == nil {
			t.Errorf("readOnlyCommands names %q, which is not a command", name)
		}
	}
}
