package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/syncer"
)

func TestMain(m *testing.M) {
	state.UseTestClock()    // STRATA_TEST_NOW moves strata's clock in this binary only
	gitstore.UseTestOwner() // GIT_TEST_ASSUME_DIFFERENT_OWNER=1, as for git, in this binary only
	// STRATA_TEST_CRASH=STEP kills the process at that step of a sync (or
	// restore-STEP of a restore), as a power cut or kill -9 would.
	// STRATA_TEST_PAUSE="STEP FILE" holds a sync or a restore at that step
	// until FILE exists (at most a minute), as a slow disk or a stopped
	// process would; FILE.waiting says it got there.
	pause := func(step string) {
		if s, file, ok := strings.Cut(os.Getenv("STRATA_TEST_PAUSE"), " "); ok && s == step {
			os.WriteFile(file+".waiting", nil, 0o644)
			for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(file); err == nil {
					break
				}
			}
		}
	}
	syncer.CrashPoint = func(step string) {
		pause(step)
		if os.Getenv("STRATA_TEST_CRASH") == step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	// STRATA_TEST_WRITES_WAIT shortens how long a record waits for a sync's
	// write phase (engine.WritesWait).
	if d, err := time.ParseDuration(os.Getenv("STRATA_TEST_WRITES_WAIT")); err == nil {
		engine.WritesWait = d
	}
	// STRATA_TEST_RESTORE_EDIT="STEP PATH" appends a newline to PATH at
	// that step of a restore (engine.RestoreStep), as an editor saving the
	// file at that moment would.
	engine.RestoreStep = func(step string) {
		pause(step)
		if os.Getenv("STRATA_TEST_CRASH") == "restore-"+step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		if s, path, ok := strings.Cut(os.Getenv("STRATA_TEST_RESTORE_EDIT"), " "); ok && s == step {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				f.WriteString("\n")
				f.Close()
			}
		}
	}
	// STRATA_TEST_WRITE_EDIT="STEP PATH FILE [N]" appends FILE's content to
	// PATH (creating it), by a temp file renamed over it, at that step of a
	// single write of PATH (engine.WriteStep: "check", "added"), the first N
	// times (default 1; "all": every time), as an agent saving the file
	// right after strata read it would.
	if f := strings.Fields(os.Getenv("STRATA_TEST_WRITE_EDIT")); len(f) >= 3 {
		left := 1
		if len(f) > 3 {
			if left, _ = strconv.Atoi(f[3]); f[3] == "all" {
				left = -1
			}
		}
		engine.WriteStep = func(step string) {
			if step != f[0]+" "+f[1] || left == 0 {
				return
			}
			left--
			old, _ := os.ReadFile(f[1])
			add, _ := os.ReadFile(f[2])
			if err := os.WriteFile(f[1]+".agent-tmp", append(old, add...), 0o644); err == nil {
				os.Rename(f[1]+".agent-tmp", f[1])
			}
		}
	}
	// STRATA_TEST_FLUSH=whole makes a large sync durable by syncfs (Linux),
	// =files by per-file fsyncs, whatever the machine's unwritten data.
	switch os.Getenv("STRATA_TEST_FLUSH") {
	case "whole":
		atomicfile.CheapFlush = func(int) bool { return runtime.GOOS == "linux" }
	case "files":
		atomicfile.CheapFlush = func(int) bool { return false }
	}
	testscript.Main(withCompanion{m}, map[string]func(){
		"strata": func() { os.Exit(Main()) },
	})
}

// withCompanion runs the tests with strata-serve (the servers that strata
// mcp and strata timeline --serve become) built for tests, with strata's
// test clock, and first on PATH, where strata finds it.
type withCompanion struct{ m *testing.M }

func (w withCompanion) Run() int {
	dir, err := os.MkdirTemp("", "strata-serve-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(gobin, "build", "-tags", "strata_testclock", "-o", filepath.Join(dir, "strata-serve"), "github.com/strata-dev/strata/cmd/strata-serve")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build strata-serve: %v\n%s", err, out)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return w.m.Run()
}

// TestScripts runs the CLI scenarios in testdata/script with real git.
func TestScripts(t *testing.T) {
	runScripts(t, "")
}

// TestScriptsAYearLater runs every scenario again with strata's clock a
// year and a day ahead of the wall clock: a scenario that depends on the
// day it runs (rather than pinning STRATA_TEST_NOW) fails here first.
func TestScriptsAYearLater(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	runScripts(t, "+8784h")
}

func runScripts(t *testing.T, clock string) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			if clock != "" {
				e.Setenv("STRATA_TEST_NOW", clock)
			}
			return setupScript(e)
		},
		Cmds:      scriptCmds,
		Condition: scriptCondition,
	})
}

// scriptCondition answers a scenario's own conditions: [root], strata run
// as root (a scenario that gives files to another user needs it).
func scriptCondition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// setupScript gives every scenario a clean git identity and home, and the
// epoch of its clock: a scenario that says `clock <RFC 3339>` (or `env
// STRATA_TEST_NOW=<RFC 3339>`) starts at that instant and runs on from there
// (sleep included).
func setupScript(e *testscript.Env) error {
	e.Setenv("STRATA_TEST_EPOCH", strconv.FormatInt(time.Now().UnixNano(), 10))
	home := filepath.Join(e.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Test User",
		"GIT_AUTHOR_EMAIL":    "test@example.com",
		"GIT_COMMITTER_NAME":  "Test User",
		"GIT_COMMITTER_EMAIL": "test@example.com",
		"MEMORY_FILE_PATH":    "",
		"TZ":                  "UTC",
	} {
		e.Setenv(k, v)
	}
	if root, err := filepath.Abs(filepath.Join("..", "..")); err == nil {
		e.Setenv("REPO_ROOT", root)
	}
	return nil
}

var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// capture VAR PROG ARGS...: run PROG and store its trimmed stdout in $VAR.
	"capture": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: capture VAR PROG [ARGS...]")
		}
		cmd := exec.Command(args[1], args[2:]...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = scriptEnv(ts)
		out, err := cmd.Output()
		if err != nil {
			ts.Fatalf("capture %s: %v", strings.Join(args[1:], " "), err)
		}
		ts.Setenv(args[0], strings.TrimSpace(string(out)))
	},
	// exits CODE PROG ARGS...: run PROG, expect exit status CODE; its output
	// can then be checked with stdout and stderr.
	"exits": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: exits CODE PROG [ARGS...]")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		got := 0
		if err := ts.Exec(args[1], args[2:]...); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				ts.Fatalf("%s: %v", args[1], err)
			}
			got = ee.ExitCode()
		}
		if got != want {
			ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
		}
	},
	// await TIMEOUT REGEXP PROG ARGS...: run PROG every 50ms until its stdout
	// matches REGEXP; fail after TIMEOUT. For asynchronous effects (the watcher).
	"await": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 3 {
			ts.Fatalf("usage: await TIMEOUT REGEXP PROG [ARGS...]")
		}
		d, err := time.ParseDuration(args[0])
		ts.Check(err)
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		deadline := time.Now().Add(d)
		var out []byte
		for time.Now().Before(deadline) {
			cmd := exec.Command(args[2], args[3:]...)
			cmd.Dir = ts.MkAbs(".")
			cmd.Env = scriptEnv(ts)
			out, _ = cmd.Output()
			if re.Match(out) != neg {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		ts.Fatalf("after %s, %s printed:\n%s", d, strings.Join(args[2:], " "), out)
	},
	// clock TIME: strata's clock reads TIME (RFC 3339) now and runs on from
	// here, however long the scenario took to get here: the epoch is reset
	// with it. (`env STRATA_TEST_NOW=TIME` alone runs on from the scenario's
	// start, so on a loaded machine a time matched to the second could be
	// seconds late.)
	"clock": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: clock TIME")
		}
		if _, err := time.Parse(time.RFC3339Nano, args[0]); err != nil {
			ts.Fatalf("clock: %v", err)
		}
		ts.Setenv("STRATA_TEST_NOW", args[0])
		ts.Setenv("STRATA_TEST_EPOCH", strconv.FormatInt(time.Now().UnixNano(), 10))
	},
	// sleep DURATION: wait, so that commit times (one-second resolution) differ.
	"sleep": func(ts *testscript.TestScript, neg bool, args []string) {
		d, err := time.ParseDuration(args[0])
		ts.Check(err)
		time.Sleep(d)
	},
	// mkfile KIND SIZE FILE: write a generated bad-input file. FILE is read
	// with Go's escapes (\n, \x9b, \u009b: names no script can spell).
	// KIND: big (SIZE bytes of JSON string), deep (SIZE nested arrays),
	// binary (SIZE bytes with NULs), latin1 (JSON with a non-UTF-8 byte),
	// phase (a completed tier 1 of a phase-output session), headings and
	// items (a MEMORY.md of a workflow section of one note, then SIZE
	// empty "#" headings, or SIZE more empty items of its list), paragraph
	// (that workflow section, then a "## Notes" section of one paragraph
	// of SIZE "a" lines).
	"mkfile": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: mkfile KIND SIZE FILE")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		var data []byte
		switch args[0] {
		case "big":
			data = append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), n)...), `"}`...)
		case "deep":
			data = append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
		case "binary":
			data = make([]byte, n)
			for i := range data {
				data[i] = byte(i * 7)
			}
		case "ok":
			data = []byte(`{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T10:00:00Z"}` + "\n")
		case "phase": // a completed tier 1 of a phase-output session
			data = []byte(`{"$schema": "phase-output-v2.0.0", "phase": 1, "tier_name": "Query", "tier_label": "query", "workers_executed": [], "started_at": "2026-11-22T09:00:00Z", "completed_at": "2026-11-22T09:01:00Z", "duration_seconds": 60, "memory_snapshot": {}, "quality_metrics": {"completeness": 1, "accuracy": 1, "tier_score": 1}, "status": "completed", "errors": []}` + "\n")
		case "headings", "items":
			line := map[string]string{"headings": "#\n", "items": "-\n"}[args[0]]
			data = []byte("# Memory\n\n## Workflow state\n\n- a note\n" + strings.Repeat(line, n))
		case "paragraph":
			data = []byte("# Memory\n\n## Workflow state\n\n- a note\n\n## Notes\n" + strings.Repeat("a\n", n))
		case "latin1":
			data = []byte("{\"type\": \"APEX\", \"phase\": \"caf\xe9\", \"lastUpdated\": \"2026-11-22T10:00:00Z\"}\n")
		default:
			ts.Fatalf("unknown kind %s", args[0])
		}
		name, err := strconv.Unquote(`"` + args[2] + `"`)
		ts.Check(err)
		name = ts.MkAbs(name)
		ts.Check(os.MkdirAll(filepath.Dir(name), 0o755))
		ts.Check(os.WriteFile(name, data, 0o644))
	},
	// jsonhas FILE TEXT: FILE is one JSON document (cp stdout FILE) and one of
	// its strings, a key or a value at any depth, contains TEXT, read with
	// Go's escapes (\u009b): what an escape in the output decodes to.
	"jsonhas": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: jsonhas FILE TEXT")
		}
		text, err := strconv.Unquote(`"` + args[1] + `"`)
		ts.Check(err)
		var doc any
		if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc); err != nil {
			ts.Fatalf("%s: not one JSON document: %v", args[0], err)
		}
		var has func(v any) bool
		has = func(v any) bool {
			switch v := v.(type) {
			case string:
				return strings.Contains(v, text)
			case []any:
				return slices.ContainsFunc(v, has)
			case map[string]any:
				for k, x := range v {
					if strings.Contains(k, text) || has(x) {
						return true
					}
				}
			}
			return false
		}
		if has(doc) == neg {
			ts.Fatalf("%s: a string containing %q: %v, want %v", args[0], text, !neg, neg)
		}
	},
	// gitsnap: remember HEAD, the index bytes, the branches and the status
	// of the work tree; gitcheck: assert they are unchanged and git fsck
	// --strict is clean.
	"gitsnap": func(ts *testscript.TestScript, neg bool, args []string) {
		ts.Check(os.WriteFile(ts.MkAbs(".gitsnap"), gitState(ts), 0o644))
	},
	"gitcheck": func(ts *testscript.TestScript, neg bool, args []string) {
		want, err := os.ReadFile(ts.MkAbs(".gitsnap"))
		ts.Check(err)
		if got := gitState(ts); !bytes.Equal(got, want) {
			ts.Fatalf("HEAD, index or branches changed:\nbefore:\n%s\nafter:\n%s", want, got)
		}
		cmd := exec.Command("git", "fsck", "--strict", "--no-progress")
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = scriptEnv(ts)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 && bytes.Contains(out, []byte("error")) {
			ts.Fatalf("git fsck --strict: %v\n%s", err, out)
		}
	},
}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"HOME", "PATH", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "TZ"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

func gitState(ts *testscript.TestScript) []byte {
	var b bytes.Buffer
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = scriptEnv(ts)
		out, _ := cmd.CombinedOutput()
		b.WriteString("$ git " + strings.Join(args, " ") + "\n")
		b.Write(out)
	}
	run("rev-parse", "--verify", "-q", "HEAD")
	run("symbolic-ref", "-q", "HEAD")
	run("for-each-ref", "refs/heads", "refs/tags")
	run("ls-files", "--stage")
	gitDir := ts.MkAbs(".git")
	if idx, err := os.ReadFile(filepath.Join(gitDir, "index")); err == nil {
		fmt.Fprintf(&b, "index: %d bytes, sha256 %x\n", len(idx), sha256.Sum256(idx))
	}
	return b.Bytes()
}
