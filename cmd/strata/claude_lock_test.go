package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-dev/strata/hooks"
)

// Two claude installs at once (note23 "Left alone"): each read the
// record of what install added (<gitdir>/strata/claude-added.json) and
// wrote back its own version, so the second dropped the first's entry and
// a later uninstall left the empty objects behind. Here the second
// (install --mcp) starts while the first (install) is between its read of
// the record and its write: it waits for the first to finish, and the
// record ends with both entries; uninstall --mcp then gives settings.json
// back byte for byte.
func TestClaudeInstallsSerialized(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	settings := filepath.Join(dir, ".claude", "settings.json")
	before := []byte("{\n  \"model\": \"x\"\n}\n")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, before, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(o claudeOptions) (string, error) {
		var out bytes.Buffer
		e := &env{In: strings.NewReader(""), Out: &out, Err: &out, Dir: dir, Now: time.Now, catchSignals: func() {}}
		err := runClaude(e, o)
		return out.String(), err
	}

	type result struct {
		out string
		err error
	}
	second := make(chan result, 1)
	waiting := make(chan struct{}, 1)
	var started atomic.Bool
	hooks.NoteStep = func(step string) {
		switch {
		case step == "wait":
			waiting <- struct{}{}
		case step == "read" && started.CompareAndSwap(false, true):
			// the first install has read the record and not yet
			// written it: the second runs now, to its end or until it
			// waits for the first
			go func() {
				out, err := run(claudeOptions{MCP: true})
				second <- result{out, err}
			}()
			select {
			case <-waiting:
			case r := <-second:
				second <- r
			}
		}
	}
	t.Cleanup(func() { hooks.NoteStep = nil })
	if out, err := run(claudeOptions{}); err != nil {
		t.Fatalf("first install: %v\n%s", err, out)
	}
	if r := <-second; r.err != nil {
		t.Fatalf("second install: %v\n%s", r.err, r.out)
	}
	hooks.NoteStep = nil

	gitDir := filepath.Join(dir, ".git")
	for _, p := range []string{hooks.SettingsPath, hooks.MCPPath} {
		if rec, err := hooks.ReadAdded(gitDir, p, 1<<20); err != nil || rec == nil {
			t.Errorf("the record of what install added to %s: %+v, %v; want it kept", p, rec, err)
		}
	}
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := hooks.ClaudeInstalled(hooks.SettingsPath, data); !ok || err != nil {
		t.Errorf("settings.json after both installs: %s (%v); want strata's hooks", data, err)
	}
	if mcp, err := os.ReadFile(filepath.Join(dir, hooks.MCPPath)); err != nil || !bytes.Contains(mcp, []byte(`"strata"`)) {
		t.Errorf(".mcp.json: %s (%v); want strata's server", mcp, err)
	}
	if out, err := run(claudeOptions{Remove: true, MCP: true}); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(settings); !bytes.Equal(data, before) {
		t.Errorf("settings.json after uninstall:\n%s\nwant it as it was:\n%s", data, before)
	}
}
