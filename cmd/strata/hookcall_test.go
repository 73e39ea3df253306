package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// `strata validate --hook`, dispatched before the CLI is built, answers as
// the CLI does: the same exit code, stdout and stderr as the same call
// going through it (with -C, which only the CLI reads), for a valid file,
// an invalid one, a file strata does not keep, and stdin that is not hook
// JSON.
func TestHookCallSameWithoutCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Setenv("HOME", t.TempDir())
	dir := emptyRepo(t)
	write := func(rel, content string) string {
		name := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	valid := write(".claude/workflow-state.json", `{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T10:00:00Z"}`+"\n")
	invalid := write(".claude/initiative.json", `{"status": 3}`+"\n")
	unkept := write("notes.txt", "hello\n")
	hook := func(file string) string {
		return fmt.Sprintf(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Write","cwd":%q,"tool_input":{"file_path":%q}}`, dir, file)
	}
	call := func(args []string, stdin string) (int, string, string) {
		var out, errb bytes.Buffer
		e := &env{In: bytes.NewReader([]byte(stdin)), Out: &out, Err: &errb, Dir: dir,
			Now: func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }}
		return run(context.Background(), args, e), out.String(), errb.String()
	}
	for _, stdin := range []string{hook(valid), hook(invalid), hook(unkept), "not json"} {
		if !isHookCall([]string{"strata", "validate", "--hook"}) {
			t.Fatal("the hook's command line is not dispatched directly")
		}
		code, out, errs := call([]string{"strata", "validate", "--hook"}, stdin)
		code2, out2, errs2 := call([]string{"strata", "-C", dir, "validate", "--hook"}, stdin)
		if code != code2 || out != out2 || errs != errs2 {
			t.Errorf("stdin %.60q:\n direct: %d %q %q\n CLI:    %d %q %q", stdin, code, out, errs, code2, out2, errs2)
		}
		if stdin == hook(invalid) && code != exitBlocked {
			t.Errorf("invalid file: exit %d, want %d", code, exitBlocked)
		}
	}
	if isHookCall([]string{"strata", "validate", "--hook", "x"}) || isHookCall([]string{"strata", "validate"}) {
		t.Error("another command line is taken for the hook's")
	}
}
