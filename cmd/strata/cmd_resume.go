package main

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type resumeOptions struct {
	JSON bool
	Hook bool
}

func newResumeCommand(e *env) *cli.Command {
	var o resumeOptions
	return &cli.Command{
		Name:  "resume",
		Usage: "say where the work stands, for a new agent session",
		Description: `Follows the read protocol: L1 (.claude/*.json), L3 (the MCP memory graph),
L2 (MEMORY.md), then PhaseOutputs/ and PhaseOutcomes/. Prints the active
workflow (type, phase, context, age), the degradation tier (Full: L1, L2 and
L3; Standard: L1 and one more; Minimal: L1 only; none: no L1), the pending
blocking decisions, the last completed tier of each phase-output session,
and what to run next.

A workflow state past lastUpdated + ttl (default 24h) is expired first: the
line "Expired workflow: ..." goes to MEMORY.md, the file is reset to {} and
recorded with source expire; strata restore undoes it.

--hook prints the JSON a Claude Code SessionStart hook returns, the report
in hookSpecificOutput.additionalContext (under 10 000 characters), and
always exits 0 so a broken state never breaks a session.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
			&cli.BoolFlag{Name: "hook", Usage: "print Claude Code SessionStart hook output; always exit 0", Destination: &o.Hook},
		},
		Action: func(c *cli.Context) error { return runResume(e, o) },
	}
}

// maxHookContext keeps the hook's context under Claude Code's 10 000 characters.
const maxHookContext = 9500

type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func runResume(e *env, o resumeOptions) error {
	e.hook = o.Hook
	r, err := resume(e)
	if o.Hook {
		var h hookOutput
		h.HookSpecificOutput.HookEventName = "SessionStart"
		if err != nil {
			h.HookSpecificOutput.AdditionalContext = "strata resume: " + err.Error()
		} else {
			h.HookSpecificOutput.AdditionalContext = clip("strata resume (workflow state of this repository):\n"+r.Text(), maxHookContext)
		}
		return writeJSON(e.Out, h)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Out, r)
	}
	if x := r.Expired; x != nil {
		fmt.Fprintf(e.Out, "expired: %s\n", state.TermSafe(x.Line))
	}
	printText(e, r.Text())
	return nil
}

// printText prints a report made from state files, which may come from
// another machine, one line at a time, each quoted after its indent when a
// terminal would act on it (state.TermSafe). JSON and hook output need no
// such care.
func printText(e *env, text string) {
	io.WriteString(e.Out, state.TermText(text))
}

func resume(e *env) (*layers.Report, error) {
	eng, err := open(e)
	if err != nil {
		return nil, err
	}
	return layers.New(eng, func(msg string) { fmt.Fprintf(e.Err, "strata: %s\n", msg) }).Resume(state.SourceRecord)
}

// clip cuts s to at most n bytes at a rune boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "\n[cut: run strata resume for the rest]"
	s = s[:n-len(more)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + more
}
