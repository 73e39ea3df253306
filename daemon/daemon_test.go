package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/internal/syncbuf"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

func newRepo(t *testing.T) *engine.Engine {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, config.FileName), []byte("# defaults\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func write(t *testing.T, eng *engine.Engine, path, content string) {
	t.Helper()
	name := eng.Config().Abs(path)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// start runs the daemon until the test ends and waits for its catch-up.
func start(t *testing.T, eng *engine.Engine, problems *syncbuf.Buffer) {
	t.Helper()
	startWith(t, eng, problems, 20*time.Millisecond)
}

// startWith is start with the given debounce.
func startWith(t *testing.T, eng *engine.Engine, problems *syncbuf.Buffer, debounce time.Duration) {
	t.Helper()
	startOpts(t, eng, Options{Debounce: debounce, Rescan: time.Hour, Problems: problems})
}

// startOpts is start with the given options.
func startOpts(t *testing.T, eng *engine.Engine, o Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	o.Ready = func() { close(ready) }
	go func() {
		done <- Run(ctx, eng, o)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run returned before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no catch-up in 10s")
	}
}

func TestRunRecordsCatchUpAndEdits(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, ".claude/a.json", `{"v": 1}`)
	var problems syncbuf.Buffer
	start(t, eng, &problems)

	logOf := func(path string) []state.Entry {
		ents, err := eng.Log(state.LogQuery{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		return ents
	}
	if ents := logOf(".claude/a.json"); len(ents) != 1 || ents[0].Source != state.SourceWatch {
		t.Fatalf("catch-up recorded %+v, want one watch entry", ents)
	}
	write(t, eng, ".claude/a.json", `{"v": 2}`)
	waitFor(t, "the edit to be recorded", func() bool { return len(logOf(".claude/a.json")) == 2 })

	// An invalid version is reported at once and quarantined, never recorded.
	write(t, eng, ".claude/a.json", `{"v": `)
	waitFor(t, "the invalid version to be reported", func() bool { return strings.Contains(problems.String(), ".claude/a.json:") })
	if n := len(logOf(".claude/a.json")); n != 2 {
		t.Errorf("the invalid version was recorded (%d entries)", n)
	}
	waitFor(t, "the quarantine", func() bool {
		rej, _ := eng.RejectedLog(state.LogQuery{})
		return len(rej) == 1
	})

	st, err := Info(eng)
	if err != nil || !st.Running || st.PID != os.Getpid() {
		t.Fatalf("Info = %+v, %v; want running in this process", st, err)
	}
	waitFor(t, "the published counters", func() bool {
		st, _ := Info(eng)
		return st.Recorded == 2 && st.Rejected == 1
	})
}

func TestSecondWatcherIsRefused(t *testing.T) {
	eng := newRepo(t)
	start(t, eng, nil)
	other, err := engine.Open(eng.Root())
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), other, Options{Debounce: 20 * time.Millisecond})
	if !errors.Is(err, state.ErrLocked) {
		t.Fatalf("second Run = %v, want ErrLocked", err)
	}
}

func TestInfoWithoutWatcher(t *testing.T) {
	eng := newRepo(t)
	st, err := Info(eng)
	if err != nil || st.Running {
		t.Fatalf("Info = %+v, %v; want not running", st, err)
	}
}

// TestPublishedStatusRoundTrips: what the watcher publishes (counters and
// sync status, from two goroutines) is what Info reads back.
func TestPublishedStatusRoundTrips(t *testing.T) {
	eng := newRepo(t)
	if err := os.MkdirAll(filepath.Dir(LockPath(eng)), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := pidlock.Acquire(LockPath(eng), eng.Shared())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	pb := &publisher{lock: lock}
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	pb.update(func(p *Published) { p.Recorded, p.Rejected = 3, 1 })
	pb.update(func(p *Published) { p.SyncStatus = SyncStatus{SyncRemote: "origin", LastSync: at} })
	pb.update(func(p *Published) { p.LastSyncError, p.SyncFailures = "fetch origin: down", 2 })
	st, err := Info(eng)
	if err != nil {
		t.Fatal(err)
	}
	want := Published{Recorded: 3, Rejected: 1, SyncStatus: SyncStatus{SyncRemote: "origin", LastSync: at, LastSyncError: "fetch origin: down", SyncFailures: 2}}
	if !st.Running || st.Published != want {
		t.Errorf("Info = %+v, want %+v", st, want)
	}
}

// workflowState is the cleared state: valid, and with no TTL for the
// watcher's expiry to act on whatever day the test runs (an active state
// dated the day it was written was expired, and recorded, from a day later).
const workflowState = `{}`

// TestReplacedDirIsRefused: .claude/ renamed away and replaced by a symbolic
// link (a dotfiles-managed .claude) is refused as strata record refuses it,
// one problem line, and the deletion of its files is never recorded: the
// watcher rescans once the swap is over, not between its two steps.
func TestReplacedDirIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, eng *engine.Engine) string
		want   string
	}{
		{"out of the repository", func(t *testing.T, eng *engine.Engine) string {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "workflow-state.json"), []byte(workflowState), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "its directory is a symbolic link out of the repository; not followed"},
		{"into .git", func(*testing.T, *engine.Engine) string { return ".git" },
			"its directory is a symbolic link into a .git directory; not followed"},
		{"to nothing", func(*testing.T, *engine.Engine) string { return "nowhere" },
			"its directory is a symbolic link that leads nowhere; not followed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := newRepo(t)
			const path = ".claude/workflow-state.json"
			write(t, eng, path, workflowState)
			var problems syncbuf.Buffer
			// A long debounce: the two steps of the swap, apart as two
			// commands in a shell are, fall well within it.
			startWith(t, eng, &problems, time.Second)
			logOf := func() []state.Entry {
				ents, err := eng.Log(state.LogQuery{Path: path})
				if err != nil {
					t.Fatal(err)
				}
				return ents
			}
			if n := len(logOf()); n != 1 {
				t.Fatalf("catch-up recorded %d entries, want 1", n)
			}
			claude := eng.Config().Abs(".claude")
			if err := os.Rename(claude, filepath.Join(t.TempDir(), "claude.bak")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // mv, then ln -s
			if err := os.Symlink(tc.target(t, eng), claude); err != nil {
				t.Fatal(err)
			}
			want := path + ": /: " + tc.want + "\n"
			waitFor(t, "the refusal", func() bool { return strings.Contains(problems.String(), want) })
			if got := problems.String(); got != want {
				t.Errorf("problems:\n%s\nwant the one line:\n%s", got, want)
			}
			if ents := logOf(); len(ents) != 1 {
				t.Errorf("recorded %+v; want the catch-up's version only", ents)
			}
		})
	}
}

// TestChmodRereadsUnreadable: a kept file the watcher could not read is read
// again when a chmod arrives, not at the next rescan. Root reads a mode 000
// file, so the test makes the read fail another way: the file is over
// max_size, then shrunk through a hard link outside every watched directory
// (no event reaches the watcher), then chmodded.
func TestChmodRereadsUnreadable(t *testing.T) {
	eng := newRepo(t)
	if err := os.WriteFile(eng.Config().Abs(config.FileName), []byte("max_size: 200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(eng.Root())
	if err != nil {
		t.Fatal(err)
	}
	write(t, eng, "elsewhere/state.json", `{"pad": "`+strings.Repeat("x", 300)+`"}`)
	var problems syncbuf.Buffer
	start(t, eng, &problems)

	const path = ".claude/a.json"
	if err := os.MkdirAll(eng.Config().Abs(".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(eng.Config().Abs("elsewhere/state.json"), eng.Config().Abs(path)); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	waitFor(t, "the refusal", func() bool { return strings.Contains(problems.String(), path+": /: file is") })
	write(t, eng, "elsewhere/state.json", `{"v": 1}`) // the same inode: the kept file is now within max_size
	if err := os.Chmod(eng.Config().Abs(path), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the version to be recorded", func() bool {
		ents, err := eng.Log(state.LogQuery{Path: path})
		return err == nil && len(ents) == 1
	})
}

// TestBadNameReportedAtOnce: a file kept but for a control character in its
// name is reported when its event arrives, in strata validate's line, and
// once, however often it is written.
func TestBadNameReportedAtOnce(t *testing.T) {
	eng := newRepo(t)
	var problems syncbuf.Buffer
	start(t, eng, &problems)
	const bad = ".claude/a\nb.json"
	want := engine.BadName(bad).Error() + "\n"
	write(t, eng, bad, `{"v": 1}`)
	waitFor(t, "the bad name to be reported", func() bool { return problems.String() == want })
	write(t, eng, bad, `{"v": 2}`)
	// A kept file written after it: once it is recorded, the second write's
	// event has been handled too.
	write(t, eng, ".claude/ok.json", `{"v": 1}`)
	waitFor(t, "the kept file to be recorded", func() bool {
		ents, err := eng.Log(state.LogQuery{Path: ".claude/ok.json"})
		return err == nil && len(ents) == 1
	})
	if got := problems.String(); got != want {
		t.Errorf("problems:\n%q\nwant once:\n%q", got, want)
	}
}

// TestLinkedDirInsideIsWatched: a .claude that dotfiles link to a folder of
// the work tree is watched where its files really are: each version
// written through the link is recorded as it settles, not at the next
// rescan (an hour away here), and so is one written under the real name.
func TestLinkedDirInsideIsWatched(t *testing.T) {
	eng := newRepo(t)
	const path = ".claude/settings.json"
	write(t, eng, "dotfiles/claude/settings.json", `{"s": 0}`)
	if err := os.Symlink("dotfiles/claude", eng.Config().Abs(".claude")); err != nil {
		t.Fatal(err)
	}
	start(t, eng, nil)
	versions := func() int {
		ents, err := eng.Log(state.LogQuery{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	waitFor(t, "the catch-up of "+path, func() bool { return versions() == 1 })
	write(t, eng, path, `{"s": 1}`)
	waitFor(t, "the version written through the link", func() bool { return versions() == 2 })
	write(t, eng, "dotfiles/claude/settings.json", `{"s": 2}`)
	waitFor(t, "the version written under the real name", func() bool { return versions() == 3 })
}

// TestStopsWhenRepositoryGone: a watcher whose git directory, or whole work
// tree, is deleted under it stops with an error wrapping state.ErrNotRepo
// (exit 3) and never makes the git directory again: a stub .git (objects,
// refs, strata/sync-journal.lock) would make a second watcher start there
// and keep `git clone URL <same path>` from working.
func TestStopsWhenRepositoryGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(eng *engine.Engine) string
		want   string
	}{
		{"git directory", func(eng *engine.Engine) string { return eng.GitDir() }, "git directory removed or replaced; watcher stopped"},
		{"work tree", func(eng *engine.Engine) string { return eng.Root() }, "work tree removed or replaced; watcher stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := newRepo(t)
			write(t, eng, ".claude/a.json", `{"v": 1}`)
			write(t, eng, ".strata.yaml", "kept: []\n")
			ready := make(chan struct{})
			done := make(chan error, 1)
			var logged syncbuf.Buffer
			go func() {
				done <- Run(context.Background(), eng, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour,
					Logger: slog.New(slog.NewTextHandler(&logged, nil)), Ready: func() { close(ready) }})
			}()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("Run returned before ready: %v", err)
			}
			gitDir := eng.GitDir()
			// rm -rf races the watcher's last reads of git's rules (a
			// note of the HEAD last compared written into .git/strata as
			// the removal passes it: "directory not empty"), as it races
			// any process working in the repository; a second pass ends
			// it, and what is checked below is that the watcher stops and
			// never makes the directory again
			err := os.RemoveAll(tc.remove(eng))
			for try := 0; err != nil && try < 3; try++ {
				time.Sleep(50 * time.Millisecond)
				err = os.RemoveAll(tc.remove(eng))
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "git directory" {
				write(t, eng, ".claude/a.json", `{"v": 2}`) // a change to record
			}
			select {
			case err := <-done:
				// (a work tree removed while the watcher reloads may be seen
				// as its git directory going first: rm -rf takes it first)
				if !errors.Is(err, state.ErrNotRepo) || !strings.Contains(err.Error(), tc.want) &&
					!(tc.name == "work tree" && strings.Contains(err.Error(), "git directory removed or replaced; watcher stopped")) {
					t.Errorf("Run: %v, want %q wrapping ErrNotRepo", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the watcher did not stop")
			}
			// one line says why it stopped: no "not reloaded" before it
			// (attack40b: the removed .strata.yaml read as a bad one)
			if strings.Contains(logged.String(), "not reloaded") {
				t.Errorf("the log says a reload failed:\n%s", logged.String())
			}
			if _, err := os.Lstat(gitDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s made again: %v", gitDir, err)
			}
		})
	}
}

// TestSchemaEditReloads: a schema file of the user's own, edited while the
// watcher runs, is in force from then on: the watcher reloads its
// configuration (a "reloaded" log line) and a version the new schema
// refuses is rejected, not recorded; made lenient again, the version now
// valid is recorded by the reload's catch-up.
func TestSchemaEditReloads(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, config.FileName, "files:\n  - glob: \"notes/*.json\"\n    schema: schemas/note.schema.json\n")
	write(t, eng, "schemas/note.schema.json", `{"type": "object"}`)
	write(t, eng, "notes/a.json", `{"id": 1}`)
	// only the rule of .strata.yaml keeps the untracked notes: the user's
	// git configuration keeps them
	for _, p := range []string{"notes/a.json", "notes/c.json"} {
		if out, err := exec.Command("git", "-C", eng.Root(), "config", "--add", "strata.keepPrivate", p).CombinedOutput(); err != nil {
			t.Fatalf("git config: %v: %s", err, out)
		}
	}
	eng, err := engine.Open(eng.Root())
	if err != nil {
		t.Fatal(err)
	}
	var problems, logs syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, eng, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour, Problems: &problems,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), Ready: func() { close(ready) }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	<-ready
	versions := func(path string) int {
		ents, err := eng.Log(state.LogQuery{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	if versions("notes/a.json") != 1 {
		t.Fatal("notes/a.json not recorded by the catch-up")
	}
	write(t, eng, "schemas/note.schema.json", `{"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}`)
	waitFor(t, "the reload", func() bool { return strings.Count(logs.String(), "msg=reloaded") == 1 })
	write(t, eng, "notes/c.json", `{"id": 2}`)
	waitFor(t, "notes/c.json refused", func() bool { return strings.Contains(problems.String(), "notes/c.json") })
	if !strings.Contains(problems.String(), "value must be string") {
		t.Errorf("problems: %s", problems.String())
	}
	if n := versions("notes/c.json"); n != 0 {
		t.Fatalf("notes/c.json, invalid under the edited schema, recorded %d times", n)
	}
	write(t, eng, "schemas/note.schema.json", `{"type": "object"}`)
	waitFor(t, "notes/c.json recorded after the schema became lenient", func() bool { return versions("notes/c.json") == 1 })
}

// A workflow state saved between the batch the TTL check records first and
// the check's own record (under load the watcher's event for it comes
// later, and then finds it recorded): the write protocol still runs for it —
// its MEMORY.md line is written, recorded with source resolve, and logged.
// (layers_watch.txtar failed this way once under load.)
func TestExpireRecordsWithTheProtocol(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, ".claude/memory/MEMORY.md", "# Memory\n")
	write(t, eng, ".claude/memory.jsonl", "")
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2099-01-01T10:00:00Z"}`)
	saved := false
	beforeExpire = func() {
		if !saved {
			saved = true
			write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2099-01-01T11:00:00Z"}`)
		}
	}
	t.Cleanup(func() { beforeExpire = nil })
	logged := runOnce(t, eng)
	data, err := os.ReadFile(eng.Config().Abs(".claude/memory/MEMORY.md"))
	if err != nil || !strings.Contains(string(data), "- Active APEX workflow: plan completed, implementing auth\n") {
		t.Errorf("MEMORY.md %q, %v; want the protocol line", data, err)
	}
	for _, want := range []string{
		"msg=recorded path=.claude/workflow-state.json action=update source=watch",
		"msg=recorded path=.claude/memory/MEMORY.md action=update source=resolve",
	} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
}

// runOnce runs the watcher until its catch-up is done, then stops it, and
// returns its log.
func runOnce(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	var logged syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, eng, Options{Debounce: time.Hour, Rescan: time.Hour, Logger: slog.New(slog.NewTextHandler(&logged, nil)),
			Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("no catch-up in 10s")
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	return logged.String()
}

// A watcher killed between its record of a workflow step and the write
// protocol's writes left the step recorded, no change for the next watcher
// to find, and its marker (owedPath): the next watcher runs the protocol
// it owed, once, before its catch-up — the killed step's line first, then
// the line of a step made since — and removes the marker; a watcher after
// that replays nothing (attack22-layers L-1, attack22-verify V-6).
func TestOwedProtocolRunsAtStart(t *testing.T) {
	eng := newRepo(t)
	const mem = ".claude/memory/MEMORY.md"
	write(t, eng, mem, "# Memory\n")
	write(t, eng, ".claude/memory.jsonl", "")
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2099-01-01T10:00:00Z"}`)
	runOnce(t, eng)
	// the killed watcher's last acts: the marker, then the step recorded
	base, err := eng.Head()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(owedPath(eng), []byte(base+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2099-01-01T11:00:00Z"}`)
	k, _ := eng.Config().Classify(layers.WorkflowStatePath)
	if _, err := eng.Record([]config.Kept{k}, state.SourceWatch); err != nil {
		t.Fatal(err)
	}
	// and the agent's next step, made before the watcher came back
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"review","context":"auth","lastUpdated":"2099-01-01T12:00:00Z"}`)
	logged := runOnce(t, eng)
	want := "# Memory\n\n## Workflow state\n- Active APEX workflow: plan completed, implementing auth\n- Active APEX workflow: implement completed, reviewing auth\n"
	if data, err := os.ReadFile(eng.Config().Abs(mem)); err != nil || string(data) != want {
		t.Errorf("MEMORY.md %q, %v; want the owed line, then the next step's", data, err)
	}
	if !strings.Contains(logged, "path=.claude/memory.jsonl action=update source=resolve") {
		t.Errorf("log lacks the L3 upsert:\n%s", logged)
	}
	if _, err := os.Lstat(owedPath(eng)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the marker is still there: %v", err)
	}
	if again := runOnce(t, eng); strings.Contains(again, "msg=recorded") {
		t.Errorf("a later watcher recorded again:\n%s", again)
	}
}

// Without a marker nothing is replayed: a step whose protocol ran and wrote
// nothing (MEMORY.md absent, memory_create off; its line already there, the
// user's now) is not run again at each start (attack22-verify V-2).
func TestNothingReplayedWithoutMarker(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2099-01-01T10:00:00Z"}`)
	runOnce(t, eng)
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2099-01-01T11:00:00Z"}`)
	if first := runOnce(t, eng); !strings.Contains(first, "it would have said: Active APEX workflow: plan completed, implementing auth") {
		t.Fatalf("no warning for the absent MEMORY.md:\n%s", first)
	}
	if _, err := os.Lstat(owedPath(eng)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the marker is left after a protocol run: %v", err)
	}
	if again := runOnce(t, eng); strings.Contains(again, "would have said") || strings.Contains(again, "msg=recorded") {
		t.Errorf("a later start ran the protocol again:\n%s", again)
	}
}

// A note at owedPath that is not one line naming a commit — garbage, a
// named pipe no one writes to, a directory, a link — is said and removed,
// nothing replayed, and never hangs the watcher's start.
func TestOddOwedNoteIsRemoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(name string) error
	}{
		{"garbage", func(name string) error { return os.WriteFile(name, []byte("not a commit\n"), 0o644) }},
		{"empty", func(name string) error { return os.WriteFile(name, nil, 0o644) }}, // a write cut short: never "replay all"
		{"named pipe", func(name string) error { return syscall.Mkfifo(name, 0o644) }},
		{"directory", func(name string) error { return os.MkdirAll(filepath.Join(name, "x"), 0o755) }},
		{"link", func(name string) error { return os.Symlink("/etc/passwd", name) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := newRepo(t)
			write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"plan","lastUpdated":"2099-01-01T10:00:00Z"}`)
			runOnce(t, eng)
			if err := tc.make(owedPath(eng)); err != nil {
				t.Fatal(err)
			}
			logged := runOnce(t, eng)
			if !strings.Contains(logged, "cannot be read; removed, nothing replayed") {
				t.Errorf("not said:\n%s", logged)
			}
			if _, err := os.Lstat(owedPath(eng)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("still there: %v", err)
			}
		})
	}
}

// A note naming a commit the state ref no longer holds among its last
// entries (a forget rewrote it between the kill and the restart) replays
// nothing, and says so (attack22-journal J-6).
func TestOwedNoteOfARewrittenRef(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"plan","lastUpdated":"2099-01-01T10:00:00Z"}`)
	runOnce(t, eng)
	if err := os.WriteFile(owedPath(eng), []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logged := runOnce(t, eng)
	if !strings.Contains(logged, "the write protocol a killed watcher owed is not replayed: its note names abababab") {
		t.Errorf("not said:\n%s", logged)
	}
	if _, err := os.Lstat(owedPath(eng)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("still there: %v", err)
	}
}

// killNow is the clock of the watchers of the kill tests: the workflow
// states they write are days older, past the default TTL.
var killNow = time.Date(2099, 1, 5, 10, 0, 0, 0, time.UTC)

// TestHelperKilledWatcher is no test of its own: killedWatcher runs it in
// a child process, where it runs a watcher on STRATA_TEST_KILL_DIR, its
// clock at killNow, that SIGKILLs itself at the write step
// STRATA_TEST_KILL_AT (engine.WriteStep), as a watcher killed there is.
func TestHelperKilledWatcher(t *testing.T) {
	dir, at := os.Getenv("STRATA_TEST_KILL_DIR"), os.Getenv("STRATA_TEST_KILL_AT")
	if dir == "" {
		t.Skip("run by killedWatcher")
	}
	eng, err := engine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	eng.Now = func() time.Time { return killNow }
	engine.WriteStep = func(s string) {
		if s == at {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = Run(ctx, eng, Options{Debounce: time.Hour, Rescan: time.Hour})
	t.Fatalf("not killed at %q: %v", at, err)
}

// killedWatcher runs a watcher on eng's work tree in a child process that
// is SIGKILLed at the write step at, and returns a new engine on the work
// tree, as the next watcher opens it.
func killedWatcher(t *testing.T, eng *engine.Engine, at string) *engine.Engine {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKilledWatcher$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STRATA_TEST_KILL_DIR="+eng.Root(), "STRATA_TEST_KILL_AT="+at)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("the watcher was not killed at %q: %v\n%s", at, err, out)
	}
	next, err := engine.Open(eng.Root())
	if err != nil {
		t.Fatal(err)
	}
	next.Now = func() time.Time { return killNow }
	return next
}

// A watcher killed during its TTL expiry — after the reset to {}, before
// the Expired line; or after the line, before the graph lost the expired
// workflow — left the marker: the next watcher writes the line, once, and
// takes the entity out of the graph (attack23-verify 2).
func TestKilledExpiryIsMadeGood(t *testing.T) {
	const (
		mem     = ".claude/memory/MEMORY.md"
		gr      = ".claude/memory.jsonl"
		expired = "- Expired workflow: APEX at implement for auth\n"
	)
	for _, at := range []string{"check " + mem, "written " + mem} {
		t.Run(at, func(t *testing.T) {
			eng := newRepo(t)
			eng.Now = func() time.Time { return killNow }
			write(t, eng, mem, "# Memory\n")
			write(t, eng, gr, "")
			write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2099-01-01T10:00:00Z"}`)
			k, _ := eng.Config().Classify(layers.WorkflowStatePath)
			outs, err := eng.Record([]config.Kept{k}, state.SourceRecord)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := layers.New(eng, nil).AfterRecord(outs); err != nil { // record --layers
				t.Fatal(err)
			}
			if g, err := os.ReadFile(eng.Config().Abs(gr)); err != nil || !strings.Contains(string(g), "phase: implement") {
				t.Fatalf("graph %q, %v; want the workflow", g, err)
			}
			eng = killedWatcher(t, eng, at)
			if ents, err := eng.Log(state.LogQuery{Path: layers.WorkflowStatePath, Limit: 1}); err != nil || len(ents) != 1 || ents[0].Source != state.SourceExpire {
				t.Fatalf("the killed watcher's last record of the workflow state: %+v, %v; want its reset", ents, err)
			}
			if _, err := os.Lstat(owedPath(eng)); err != nil {
				t.Fatalf("the killed expiry left no marker: %v", err)
			}
			logged := runOnce(t, eng)
			if data, err := os.ReadFile(eng.Config().Abs(mem)); err != nil || string(data) != "# Memory\n\n## Workflow state\n"+expired {
				t.Errorf("MEMORY.md %q, %v; want the Expired line, once", data, err)
			}
			if g, err := os.ReadFile(eng.Config().Abs(gr)); err != nil || strings.Contains(string(g), "phase: implement") {
				t.Errorf("graph %q, %v; want the expired workflow gone", g, err)
			}
			if data, err := os.ReadFile(eng.Config().Abs(layers.WorkflowStatePath)); err != nil || string(data) != "{}\n" {
				t.Errorf("workflow state %q, %v; want the reset", data, err)
			}
			if _, err := os.Lstat(owedPath(eng)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the marker is still there: %v\n%s", err, logged)
			}
		})
	}
}

// The watcher killed owing a step's line, then resume's TTL check expired
// the workflow before the watcher came back: the owed line goes before the
// Expired line, and MEMORY.md ends saying the workflow expired
// (attack23-verify 1).
func TestOwedLineGoesBeforeAnExpiry(t *testing.T) {
	eng := newRepo(t)
	eng.Now = func() time.Time { return time.Date(2099, 1, 1, 13, 0, 0, 0, time.UTC) }
	const mem = ".claude/memory/MEMORY.md"
	write(t, eng, mem, "# Memory\n")
	write(t, eng, ".claude/memory.jsonl", "")
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2099-01-01T10:00:00Z"}`)
	runOnce(t, eng)
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2099-01-01T11:00:00Z"}`)
	runOnce(t, eng)
	// the killed watcher's last acts: the marker, then the step recorded
	base, err := eng.Head()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(owedPath(eng), []byte(base+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, eng, layers.WorkflowStatePath, `{"type":"APEX","phase":"review","context":"auth","lastUpdated":"2099-01-01T12:00:00Z"}`)
	k, _ := eng.Config().Classify(layers.WorkflowStatePath)
	if _, err := eng.Record([]config.Kept{k}, state.SourceWatch); err != nil {
		t.Fatal(err)
	}
	// then resume's TTL check, days later
	eng.Now = func() time.Time { return killNow }
	if x, _, err := layers.New(eng, nil).Expire(state.SourceRecord); err != nil || x == nil {
		t.Fatalf("Expire = %+v, %v; want it expired", x, err)
	}
	runOnce(t, eng)
	want := "# Memory\n\n## Workflow state\n- Active APEX workflow: plan completed, implementing auth\n" +
		"- Active APEX workflow: implement completed, reviewing auth\n- Expired workflow: APEX at review for auth\n"
	if data, err := os.ReadFile(eng.Config().Abs(mem)); err != nil || string(data) != want {
		t.Errorf("MEMORY.md %q, %v; want the owed line before the Expired one", data, err)
	}
}

// A note of versions found private that the watcher cannot write (a folder
// stands at .git/strata/sync-withheld.json) is logged, as a record prints it
// and a sync reports it; it was dropped with no word.
func TestUnwrittenNoteIsLogged(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, ".claude/notes.json", `{"token": "NOTESECRET"}`)
	var logs syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, eng, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), Ready: func() { close(ready) }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	<-ready
	waitFor(t, "notes.json recorded", func() bool {
		ents, err := eng.Log(state.LogQuery{Path: ".claude/notes.json"})
		return err == nil && len(ents) == 1
	})
	note := filepath.Join(eng.Root(), ".git", "strata", "sync-withheld.json")
	if err := os.MkdirAll(filepath.Join(note, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	exclude := filepath.Join(eng.Root(), ".git", "info", "exclude")
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exclude, []byte(".claude/notes.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the unwritten note logged", func() bool {
		return strings.Contains(logs.String(), "sync-withheld.json: /: warning: not written (a folder stands there")
	})
	if !strings.Contains(logs.String(), "the versions found private are not remembered") {
		t.Errorf("log: %s", logs.String())
	}
}

// The marker of an owed write protocol is made as strata's other files in
// the git directory are: 0666 less the umask, then core.sharedRepository's
// mode (attack36d L4: 0644 whatever either said).
func TestOwedMarkerMode(t *testing.T) {
	eng := newRepo(t)
	if out, err := exec.Command("git", "-C", eng.Root(), "config", "core.sharedRepository", "0640").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v: %s", err, out)
	}
	eng, err := engine.Open(eng.Root())
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{eng: eng}
	r.owe()
	st, err := os.Stat(owedPath(eng))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("the marker is %o, want 640 (core.sharedRepository=0640)", st.Mode().Perm())
	}
}
