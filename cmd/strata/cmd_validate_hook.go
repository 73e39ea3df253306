package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// hookInput is the part of Claude Code's PostToolUse hook JSON strata reads:
// {"session_id", "hook_event_name": "PostToolUse", "tool_name": "Write",
// "tool_input": {"file_path": "/abs/path", ...}, "tool_response": {...},
// "cwd"}. Write, Edit and MultiEdit all name the file in
// tool_input.file_path.
type hookInput struct {
	SessionID     string `json:"session_id"`
	ToolUseID     string `json:"tool_use_id"`
	HookEventName string `json:"hook_event_name"`
	ToolName      string `json:"tool_name"`
	ToolInput     struct {
		FilePath string `json:"file_path"`
	} `json:"tool_input"`
	Cwd string `json:"cwd"`
}

// maxHookInput bounds what is read from stdin; a Write's JSON carries the
// whole content written.
const maxHookInput = 256 << 20

// runValidateHook is `strata validate --hook`. It checks the file the tool
// just wrote, on disk, when it is a kept file of the repository Claude Code
// runs in (its cwd), with the same rules as record (schema, initiative
// transitions and append-only Phase Outcomes against the last recorded
// version). Invalid: the problems on stderr and exit 2, which Claude Code
// feeds back to the agent. Valid, not kept, deleted, or outside a
// repository: exit 0, silently. strata's own trouble (stdin that is not hook
// JSON, an unreadable configuration) never blocks the agent: one warning line
// on stderr and exit 0. Nothing is recorded; the watcher does that. It
// judges what a tool wrote: any other hook_event_name than PostToolUse
// (PreToolUse: not written yet) exits 0 with nothing checked.
func runValidateHook(e *env) error {
	data, err := readHookStdin(e)
	if err != nil {
		return hookWarn(e, "cannot read stdin: %v; nothing checked", err)
	}
	var in hookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return hookWarn(e, "stdin is not Claude Code hook JSON (%v); nothing checked", err)
	}
	if in.HookEventName != "" && in.HookEventName != "PostToolUse" {
		// PreToolUse (or any other event): the file on disk is the one the
		// tool has not written yet; judging it would block the write that
		// fixes it.
		return nil
	}
	name := in.ToolInput.FilePath
	if name == "" {
		return nil // not a file-writing tool
	}
	dir := in.Cwd
	if dir == "" || !filepath.IsAbs(dir) {
		dir = e.Dir
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	eng, err := open(&env{In: e.In, Out: e.Out, Err: e.Err, Dir: dir, Now: e.Now, hook: true})
	if errors.Is(err, state.ErrNotRepo) {
		return nil
	}
	if err != nil {
		// the agent's own write broke .strata.yaml: it is told, as for an
		// invalid state file; else strata's trouble is a warning (exit 0,
		// which Claude Code does not show the agent), and every later
		// write went unchecked with nobody told (attack34b F5)
		var ce *engine.ConfigError
		if errors.As(err, &ce) && agentWroteConfig(name, ce.Root) {
			return blockWith(e, state.Problems{ce.Problem}, config.FileName)
		}
		return hookWarn(e, "%v; nothing checked", err)
	}
	// The root has its symlinks resolved; resolve the file's directory too.
	if real, err := filepath.EvalSymlinks(filepath.Dir(name)); err == nil {
		name = filepath.Join(real, filepath.Base(name))
	}
	rel := eng.Config().Rel(dir, name)
	k, ok := eng.Config().Classify(rel)
	if !ok {
		// a file a rule would keep but for a control character in its
		// name: invalid, as validate says; the agent that wrote the name
		// is told (attack34b F4: exit 0, nothing said)
		if _, err := os.Lstat(name); err == nil && eng.Config().BadName(rel) {
			return blockWith(e, state.Problems{engine.BadName(rel)}, rel)
		}
		return nil
	}
	f, p := eng.Read(k)
	if p != nil {
		return blockWith(e, state.Problems{*p}, k.Path)
	}
	if !f.Exists {
		return nil
	}
	var prev []byte
	if engine.UsesHistory(k) { // else the history is not opened at all
		if prev, err = eng.JudgedAgainst(f); err != nil {
			return hookWarn(e, "%v; checked without history", err)
		}
	}
	ps := eng.Check(f, prev)
	if !ps.Invalid() {
		for _, p := range ps { // warnings: shown, never blocking
			fmt.Fprintln(e.Err, p.Error())
		}
		// Provenance for the commit that records this version; strata's
		// own trouble here never blocks the agent.
		if err := writeHookNote(e, func() error { return eng.NoteProvenance(k, f.Content, in.SessionID, in.ToolUseID) }); err != nil {
			return hookWarn(e, "provenance not noted: %v", err)
		}
		return nil
	}
	return blockWith(e, ps, k.Path)
}

// agentWroteConfig reports whether name, the file the agent's tool wrote,
// is root's .strata.yaml, the one that failed to load: a .strata.yaml of
// another repository (a nested clone, a sibling) is not (attack34c: an
// agent's valid write there was told this tree's broken config was its
// fault).
func agentWroteConfig(name, root string) bool {
	if filepath.Base(name) != config.FileName || root == "" {
		return false
	}
	a, err1 := filepath.EvalSymlinks(filepath.Dir(name))
	b, err2 := filepath.EvalSymlinks(root)
	return err1 == nil && err2 == nil && a == b
}

func blockWith(e *env, ps state.Problems, path string) error {
	for _, p := range ps {
		fmt.Fprintln(e.Err, p.Error())
	}
	fmt.Fprintf(e.Err, "strata: %s is invalid; fix it before going on\n", state.ShownPath(path))
	return errBlocked
}

func hookWarn(e *env, format string, args ...any) error {
	fmt.Fprintf(e.Err, "strata: validate --hook: %s\n", strings.TrimSpace(fmt.Sprintf(format, args...)))
	return nil
}
