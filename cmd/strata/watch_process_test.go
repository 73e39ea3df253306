package main

// Process-level tests of `strata watch`: real watcher processes (the test
// binary, which testscript.Main puts on PATH as "strata"), real files, real
// git. They check the invariants after the dust settles, never timings.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/validate"
)

const stateGlobConfig = `files:
  - glob: state/*.json
    class: workflow-state
    schema: workflow-state
`

// procRepo is a temp repository with 20 kept workflow-state files under state/.
type procRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newProcRepo(t *testing.T) *procRepo {
	t.Helper()
	if testing.Short() {
		t.Skip("process tests skipped in -short mode")
	}
	dir := t.TempDir()
	home := t.TempDir()
	r := &procRepo{t: t, dir: dir, env: append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "MEMORY_FILE_PATH=",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")}
	r.git("init", "-q")
	r.git("commit", "-q", "--allow-empty", "-m", "base")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".strata.yaml"), []byte(stateGlobConfig), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "state"), 0o755))
	// Only the rule of .strata.yaml keeps the untracked state files: the
	// user's git configuration keeps every name the tests write
	// (strata.keepPrivate), appended to .git/config in one write.
	var keep strings.Builder
	keep.WriteString("[strata]\n")
	for _, f := range []struct {
		prefix string
		n      int
	}{{"f", 20}, {"r", 5}, {"w", 15}} {
		for i := range f.n {
			fmt.Fprintf(&keep, "\tkeepPrivate = state/%s%02d.json\n", f.prefix, i)
		}
	}
	gc, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = gc.WriteString(keep.String())
	require.NoError(t, errors.Join(err, gc.Close()))
	return r
}

func (r *procRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

func (r *procRepo) strata(args ...string) (string, error) {
	cmd := exec.Command("strata", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// watcherProc is a running `strata watch`.
type watcherProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	ready  chan struct{}
	done   chan error
}

func (r *procRepo) startWatcher(args ...string) *watcherProc {
	r.t.Helper()
	w := &watcherProc{ready: make(chan struct{}), done: make(chan error, 1)}
	w.cmd = exec.Command("strata", append([]string{"-C", r.dir, "watch", "--debounce", "20ms", "--log-format", "text"}, args...)...)
	w.cmd.Env = r.env
	pipe, err := w.cmd.StderrPipe()
	require.NoError(r.t, err)
	require.NoError(r.t, w.cmd.Start())
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			w.mu.Lock()
			w.stderr.Write(sc.Bytes())
			w.stderr.WriteByte('\n')
			w.mu.Unlock()
			if strings.Contains(sc.Text(), "msg=watching") {
				once.Do(func() { close(w.ready) })
			}
		}
		w.done <- w.cmd.Wait()
	}()
	return w
}

func (w *watcherProc) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

func (w *watcherProc) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-w.ready:
	case err := <-w.done:
		t.Fatalf("watcher exited before it was ready: %v\n%s", err, w.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("watcher not ready after 30s:\n%s", w.log())
	}
}

func (w *watcherProc) stop(t *testing.T) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-w.done:
		require.NoError(t, err, "watcher exit:\n%s", w.log())
	case <-time.After(30 * time.Second):
		_ = w.cmd.Process.Kill()
		t.Fatalf("watcher did not stop on SIGINT:\n%s", w.log())
	}
}

func stateDoc(i, v int) []byte {
	return []byte(fmt.Sprintf("{\n  \"type\": \"APEX\",\n  \"phase\": \"p%d-v%d\",\n  \"lastUpdated\": \"2026-11-22T10:00:00Z\"\n}\n", i, v))
}

// writeAtomic is an editor's save: temp file + rename.
func writeAtomic(t *testing.T, name string, data []byte) {
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	require.NoError(t, os.WriteFile(tmp, data, 0o644))
	require.NoError(t, os.Rename(tmp, name))
}

// headMatchesDisk reports whether the state ref's head holds exactly the
// kept files on disk, byte for byte.
func (r *procRepo) headMatchesDisk() (bool, string) {
	cmd := exec.Command("git", "ls-tree", "-r", "refs/strata/state")
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.Output()
	if err != nil {
		return false, "no ref yet"
	}
	recorded := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 4 {
			recorded[f[3]] = f[2]
		}
	}
	entries, _ := os.ReadDir(filepath.Join(r.dir, "state"))
	if len(entries) != len(recorded) {
		return false, fmt.Sprintf("%d files on disk, %d recorded", len(entries), len(recorded))
	}
	for _, e := range entries {
		p := "state/" + e.Name()
		data, _ := os.ReadFile(filepath.Join(r.dir, p))
		h := exec.Command("git", "hash-object", "--stdin")
		h.Dir, h.Env, h.Stdin = r.dir, r.env, bytes.NewReader(data)
		id, _ := h.Output()
		if strings.TrimSpace(string(id)) != recorded[p] {
			return false, p + " differs"
		}
	}
	return true, ""
}

func (r *procRepo) awaitHeadMatchesDisk(t *testing.T, w *watcherProc) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	why := ""
	for time.Now().Before(deadline) {
		var ok bool
		if ok, why = r.headMatchesDisk(); ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the ref's head never matched the files on disk (%s)\n%s", why, lastLines(w.log(), 40))
}

// checkAllCommitsValid validates, for every commit on the state ref, the
// version of each path it recorded.
func (r *procRepo) checkAllCommitsValid(t *testing.T) int {
	t.Helper()
	v, err := validate.New(validate.Options{Root: r.dir})
	require.NoError(t, err)
	log := r.git("log", "--format=%H %(trailers:key=Strata-Path,valueonly,separator=%x2C)", "refs/strata/state")
	var objs []string
	for _, line := range strings.Split(log, "\n") {
		c, paths, _ := strings.Cut(line, " ")
		for _, p := range strings.Split(paths, ",") {
			if p != "" {
				objs = append(objs, c+":"+p)
			}
		}
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.Stdin = strings.NewReader(strings.Join(objs, "\n") + "\n")
	out, err := cmd.Output()
	require.NoError(t, err)
	rd := bufio.NewReader(bytes.NewReader(out))
	checked := 0
	for _, obj := range objs {
		header, err := rd.ReadString('\n')
		require.NoError(t, err)
		if strings.HasSuffix(strings.TrimSpace(header), "missing") {
			continue // a recorded deletion
		}
		var id, typ string
		var size int
		_, err = fmt.Sscanf(header, "%s %s %d", &id, &typ, &size)
		require.NoError(t, err)
		data := make([]byte, size+1)
		_, err = io.ReadFull(rd, data)
		require.NoError(t, err)
		path := obj[strings.IndexByte(obj, ':')+1:]
		ps := v.Validate(path, data[:size], "workflow-state")
		assert.False(t, ps.Invalid(), "%s recorded invalid content: %v", obj, ps)
		checked++
	}
	return checked
}

// TestWatchCrashBurst: a burst of 1 000 versions across 20 files, the
// watcher killed with SIGKILL in the middle of it, then restarted: the ref's
// head holds exactly the files on disk, git fsck --strict is clean, and every
// recorded version was valid.
func TestWatchCrashBurst(t *testing.T) {
	r := newProcRepo(t)
	before := r.git("rev-parse", "HEAD")
	w := r.startWatcher()
	w.waitReady(t)
	rng := rand.New(rand.NewSource(1))
	for v := 0; v < 1000; v++ {
		i := rng.Intn(20)
		name := filepath.Join(r.dir, "state", fmt.Sprintf("f%02d.json", i))
		data := stateDoc(i, v)
		if v%3 == 0 {
			require.NoError(t, os.WriteFile(name, data, 0o644)) // in place, as many agents write
		} else {
			writeAtomic(t, name, data)
		}
		if v == 500 {
			require.NoError(t, w.cmd.Process.Kill())
			<-w.done
		}
	}
	// Some invalid versions too: they must never reach the state ref.
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "state", "f00.json"), []byte(`{"type": "nope"}`), 0o644))
	time.Sleep(10 * time.Millisecond)
	writeAtomic(t, filepath.Join(r.dir, "state", "f00.json"), stateDoc(0, 1000))

	w2 := r.startWatcher()
	w2.waitReady(t)
	r.awaitHeadMatchesDisk(t, w2)
	w2.stop(t)
	r.git("fsck", "--strict", "--no-progress")
	assert.Equal(t, before, r.git("rev-parse", "HEAD"), "HEAD moved")
	assert.Empty(t, r.git("status", "--porcelain", "--untracked-files=no"), "index or tracked files changed")
	n := r.checkAllCommitsValid(t)
	t.Logf("%d recorded versions, all valid; head matches disk", n)
}

// TestWatchSingleInstance: two watchers race for the lock: exactly one runs,
// the other exits 3 naming its pid; after the holder is killed with SIGKILL
// a new watcher takes over.
func TestWatchSingleInstance(t *testing.T) {
	r := newProcRepo(t)
	a, b := r.startWatcher(), r.startWatcher()
	var winner, loser *watcherProc
	select {
	case err := <-a.done:
		winner, loser = b, a
		a.done <- err
	case err := <-b.done:
		winner, loser = a, b
		b.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("neither watcher exited: both hold the lock?")
	}
	err := <-loser.done
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())
	winner.waitReady(t)
	assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`another watcher is running on this work tree \(pid %d,`, winner.cmd.Process.Pid)), loser.log())

	out, err := r.strata("status")
	require.NoError(t, err, out)
	assert.Contains(t, out, fmt.Sprintf("watcher: running (pid %d", winner.cmd.Process.Pid))

	require.NoError(t, winner.cmd.Process.Kill())
	<-winner.done
	c := r.startWatcher()
	c.waitReady(t)
	c.stop(t)
}

// TestWatchRecordGCRace: a watcher, `strata record` and `git gc` on the same
// repository at once: every commit either of them reported is reachable
// from the ref's head, the ref is never broken, and fsck stays clean.
func TestWatchRecordGCRace(t *testing.T) {
	r := newProcRepo(t)
	w := r.startWatcher()
	w.waitReady(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reported []string
	hexRe := regexp.MustCompile(`\(([0-9a-f]{10})\)`)
	wg.Add(2)
	go func() { // git gc, again and again (with its default prune expiry:
		// --prune=now deletes objects other writers have not yet linked, for
		// git itself as much as for strata)
		defer wg.Done()
		for ctx.Err() == nil {
			cmd := exec.Command("git", "gc", "--quiet")
			cmd.Dir, cmd.Env = r.dir, r.env
			_ = cmd.Run()
		}
	}()
	go func() { // strata record on files the watcher also sees
		defer wg.Done()
		for v := 0; ctx.Err() == nil; v++ {
			name := filepath.Join(r.dir, "state", fmt.Sprintf("r%02d.json", v%5))
			writeAtomic(t, name, stateDoc(100+v%5, v))
			out, err := r.strata("record", "state/"+filepath.Base(name))
			if err != nil {
				t.Errorf("strata record: %v\n%s", err, out)
				return
			}
			mu.Lock()
			for _, m := range hexRe.FindAllStringSubmatch(out, -1) {
				reported = append(reported, m[1])
			}
			mu.Unlock()
		}
	}()
	for v := 0; v < 300; v++ {
		writeAtomic(t, filepath.Join(r.dir, "state", fmt.Sprintf("w%02d.json", v%15)), stateDoc(v%15, v))
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	wg.Wait()
	r.awaitHeadMatchesDisk(t, w)
	w.stop(t)
	for _, m := range regexp.MustCompile(`msg=recorded .*commit=([0-9a-f]{10})`).FindAllStringSubmatch(w.log(), -1) {
		reported = append(reported, m[1])
	}
	require.NotEmpty(t, reported)
	all := map[string]bool{}
	for _, c := range strings.Split(r.git("rev-list", "refs/strata/state"), "\n") {
		all[c[:10]] = true
	}
	var lost []string
	for _, c := range reported {
		if !all[c] {
			lost = append(lost, c)
		}
	}
	sort.Strings(lost)
	assert.Empty(t, lost, "commits reported as recorded but not reachable from refs/strata/state")
	r.git("fsck", "--strict", "--no-progress")
	r.git("rev-parse", "--verify", "refs/strata/state")
	t.Logf("%d reported commits, all reachable", len(reported))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var keep []string
	for _, l := range lines {
		if !strings.Contains(l, "msg=recorded") {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}
