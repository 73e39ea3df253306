package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/hooks"
	"github.com/strata-dev/strata/state"
)

type claudeOptions struct {
	DryRun bool
	Remove bool
	MCP    bool
}

func newClaudeCommand(e *env) *cli.Command {
	sub := func(name, usage string, remove bool) *cli.Command {
		o := claudeOptions{Remove: remove}
		flags := []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the resulting settings.json instead of writing it", Destination: &o.DryRun},
		}
		mcpUsage := "also register strata's read-only MCP server in .mcp.json"
		if remove {
			mcpUsage = "also remove strata's MCP server from .mcp.json"
		}
		flags = append(flags, &cli.BoolFlag{Name: "mcp", Usage: mcpUsage, Destination: &o.MCP})
		return &cli.Command{
			Name:  name,
			Usage: usage,
			Flags: flags,
			Action: func(c *cli.Context) error {
				if c.NArg() != 0 {
					return usagef("claude %s takes no arguments", name)
				}
				return runClaude(e, o)
			},
		}
	}
	return &cli.Command{
		Name:  "claude",
		Usage: "add or remove strata's Claude Code hooks in .claude/settings.json",
		Description: `install merges two hooks into .claude/settings.json, keeping everything else:
SessionStart runs "` + hooks.ResumeCommand + `" (its output joins the session's
context) and PostToolUse, for ` + hooks.ValidateMatcher + `, runs
"` + hooks.ValidateCommand + `" (exit 2 shows the agent the errors in the state file
it just wrote). uninstall removes exactly what install on this clone added
(noted in .git/strata/claude-added.json): the entries it added, while they
are exactly strata's, and the "hooks" object and event arrays it created
once they are empty again; an entry with fields of your own (a timeout)
stays, and so do strata's entries install found there (committed by a
teammate, written by hand, or added by a strata that noted nothing), which
uninstall names in one line. Both are idempotent; the written file is
recorded with source record.

install --mcp also registers "strata mcp" as the project's MCP server
"strata" in .mcp.json, as 'claude mcp add --scope project' writes it,
keeping every other key; uninstall --mcp removes that server again when
this clone's install added it (and mcpServers when install created it),
and names one it did not add, which stays.`,
		Subcommands: []*cli.Command{
			sub("install", "merge strata's SessionStart and PostToolUse hooks into .claude/settings.json", false),
			sub("uninstall", "remove strata's hooks from .claude/settings.json", true),
		},
	}
}

func runClaude(e *env, o claudeOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	// one claude install or uninstall at a time, from the first read of
	// the record to the last write: two at once would each write back the
	// record as they read it, the second dropping the first's entry
	if !o.DryRun {
		release, err := hooks.HoldAdded(eng.GitDir(), eng.Shared(), engine.WritesWait)
		if err != nil {
			return err
		}
		defer release()
	}
	// .mcp.json is read and checked first, written last: a settings file
	// that refuses the hooks leaves it as it was
	notes := &claudeNotes{e: e, eng: eng, writes: !o.DryRun}
	var writeMCP func() error
	if o.MCP {
		if writeMCP, err = planMCP(e, eng, notes, o.DryRun, o.Remove); err != nil {
			return err
		}
	}
	k, kept := eng.Config().Classify(hooks.SettingsPath)
	if !kept { // the user's rules ignore it: still edit it, but record nothing
		k = engine.Kept{Path: hooks.SettingsPath, Class: state.ClassClaudeJSON, Schema: "json"}
	}
	// done: the write happened (else reported already, or nothing to do);
	// Retry starts again from the read when the file changed meanwhile.
	var oc engine.Outcome
	done := false
	var left []string
	err = engine.Retry(func() error {
		var err error
		oc, done, left, err = claudeSettings(e, eng, notes, k, o)
		return err
	})
	if err != nil {
		return err
	}
	if writeMCP != nil {
		if err := writeMCP(); err != nil {
			return err
		}
	}
	if !done {
		return nil
	}
	if o.Remove {
		fmt.Fprintf(e.Out, "removed strata's hooks from %s\n", k.Path)
		leftNote(e.Out, k.Path, left)
	} else {
		fmt.Fprintf(e.Out, "updated %s: SessionStart runs %q; PostToolUse (%s) runs %q\n", k.Path, hooks.ResumeCommand, hooks.ValidateMatcher, hooks.ValidateCommand)
	}
	if note := eng.SavedNote(oc); note != "" {
		fmt.Fprintln(e.Out, note)
	}
	if oc.Entry != nil {
		fmt.Fprintf(e.Out, "recorded %s (%s)\n", oc.Path, state.ShortID(oc.Entry.Commit))
	}
	if oc.Invalid() {
		return oc.Problems
	}
	return nil
}

// claudeSettings reads the settings file k, merges strata's hooks into it
// (or out of it) and writes it, only while it is still the version read
// (engine.Put). done is false when nothing was written: a dry run or
// nothing to change, both reported here. left is what an uninstall that
// wrote left of strata's hooks (hooks.UninstallClaude), for runClaude to
// say after its report.
func claudeSettings(e *env, eng *engine.Engine, notes *claudeNotes, k engine.Kept, o claudeOptions) (oc engine.Outcome, done bool, left []string, err error) {
	f, p := eng.Read(k)
	if p != nil {
		return oc, false, nil, notRegular(eng, k.Path, p)
	}
	if f.Exists {
		if ps := eng.ValidateContent(k.Path, f.Content, "json"); ps.Invalid() {
			return oc, false, nil, ps // left untouched
		}
	}
	rec, err := notes.read(k.Path)
	if err != nil {
		return oc, false, nil, err
	}
	var out []byte
	changed := false
	if o.Remove {
		out, changed, left, err = hooks.UninstallClaude(k.Path, f.Content, rec)
		rec = nil // used: forgotten once uninstalled
	} else {
		out, rec, err = hooks.InstallClaude(k.Path, f.Content)
		changed = rec != nil
	}
	if err != nil {
		return oc, false, nil, err
	}
	if o.DryRun {
		if _, err := e.Out.Write(out); err != nil {
			return oc, false, nil, err
		}
		if !changed {
			fmt.Fprintf(e.Err, "%s: nothing to change\n", k.Path)
		} else {
			fmt.Fprintf(e.Err, "%s: would be updated (dry run)\n", k.Path)
		}
		leftNote(e.Err, k.Path, left)
		return oc, false, nil, nil
	}
	if !changed {
		if o.Remove {
			if len(left) == 0 {
				fmt.Fprintf(e.Out, "%s has no strata hooks\n", k.Path)
			}
			leftNote(e.Out, k.Path, left)
			return oc, false, nil, notes.save(k.Path, nil)
		}
		fmt.Fprintf(e.Out, "%s already has strata's hooks\n", k.Path)
		return oc, false, nil, nil
	}
	// the record is written after the file: one that cannot be fails now,
	// before anything is written
	if err := notes.check(); err != nil {
		return oc, false, nil, err
	}
	oc, err = eng.Put(k, f.ID(), out, state.SourceRecord)
	if err != nil {
		return oc, false, nil, err
	}
	if !oc.Written {
		return oc, false, nil, oc.Problems // left untouched
	}
	// what install added, so that uninstall takes out that and no more
	// (nil after an uninstall: forgotten)
	if err := notes.save(k.Path, rec); err != nil {
		return oc, true, nil, err
	}
	return oc, true, left, nil
}

// leftNote says, on one line, which of strata's hooks uninstall left in
// path and why: claude install here did not add them, so they may be the
// team's, committed (attack33 L2).
func leftNote(w io.Writer, path string, left []string) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: left %s: claude install here has no record of adding them (committed, written by hand, or installed by an older strata); delete those entries by hand to remove them\n", path, strings.Join(left, ", "))
}

// notRegular is the error for a settings file Read refused: one over
// max_size is a check that failed (exit 1, as validate says it); anything
// else (a symbolic link, a named pipe, a directory, .claude linked out of
// the work tree) is what is on disk, not the content (exit 3, contract
// §11).
func notRegular(eng *engine.Engine, rel string, p *state.Problem) error {
	st, err := os.Lstat(filepath.Join(eng.Root(), rel))
	if err == nil && st.Mode().IsRegular() && st.Size() > eng.Config().MaxSize {
		return state.Problems{*p}
	}
	return &engine.PathError{Path: rel, Reason: p.Message, IO: true}
}

// claudeNotes reads and writes the record of what claude install added
// (hooks.Added, in <gitdir>/strata/claude-added.json) for one command. A
// record file that cannot be read or parsed is named once, on stderr, and
// read as none: uninstall then leaves strata's hooks, saying so, and the
// empty objects and arrays install made, which loses the user nothing; the
// next write replaces it.
type claudeNotes struct {
	e      *env
	eng    *engine.Engine
	writes bool // not a dry run: a record file that cannot be replaced is an error
	warned bool
}

func (n *claudeNotes) limit() int64 { return hooks.NoteLimit(n.eng.Config().MaxSize) }

func (n *claudeNotes) read(path string) (*hooks.Added, error) {
	rec, err := hooks.ReadAdded(n.eng.GitDir(), path, n.limit())
	var bad *hooks.NoteError
	if errors.As(err, &bad) {
		if n.writes {
			if err := n.check(); err != nil {
				return nil, err // said before anything is written, and instead of the warning
			}
		}
		if !n.warned {
			n.warned = true
			fmt.Fprintf(n.e.Err, "strata: warning: %s: %s; ignored, as if there were no record of claude install (uninstall then leaves strata's hooks and the objects and arrays install made)\n", bad.Path, bad.Reason)
		}
		return nil, nil
	}
	return rec, err
}

// check says why the record file could not be written (hooks.CheckAdded).
func (n *claudeNotes) check() error { return hooks.CheckAdded(n.eng.GitDir()) }

func (n *claudeNotes) save(path string, rec *hooks.Added) error {
	return hooks.SaveAdded(n.eng.GitDir(), n.eng.Shared(), path, rec, n.limit())
}
