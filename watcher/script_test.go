package watcher

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The scripts in testdata/*.txt describe watcher behaviour as data, in the
// manner of fsnotify's testdata/watch-dir: file operations, then "Output:"
// and the set of paths the watcher must emit (order-insensitive, the union
// over every batch until the watcher is quiet). See testdata/README.md for
// the commands.

const (
	scriptDebounce = 50 * time.Millisecond
	// scriptTimeout bounds every wait; it is generous so a loaded CI machine
	// does not fail the suite. Passing runs never wait that long.
	scriptTimeout = 20 * time.Second
	// scriptQuiet is how long the watcher must stay silent after the expected
	// paths arrived before the output is compared, to catch extra paths.
	scriptQuiet = 10 * scriptDebounce
)

// keptDirs and keptFiles mirror strata's default kept classes (docs/contract.md §1).
var (
	keptDirs  = []string{".", ".claude", ".claude/memory", "PhaseOutputs", "PhaseOutputs/*", "PhaseOutcomes", "PhaseOutcomes/*"}
	keptFiles = []string{".claude/*.json", ".claude/memory.jsonl", ".claude/memory/MEMORY.md", "MEMORY.md",
		"PhaseOutputs/*/*.json", "PhaseOutcomes/*/*.yaml"}
)

func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, rel); ok {
			return true
		}
	}
	return false
}

func testWatchDir(rel string) bool { return matchAny(keptDirs, rel) }

// testMatch is a kept-file rule like strata's: hidden names (editors' temp,
// swap and lock files) are never kept.
func testMatch(rel string) bool {
	return !strings.HasPrefix(path.Base(rel), ".") && matchAny(keptFiles, rel)
}

// followDotfiles is the scripts' FollowLink: strata follows a link to a
// folder inside the work tree; the scripts' caller follows those that lead
// under dotfiles/ alone, so the others show what an unfollowed link does.
func followDotfiles(root string) func(rel string) bool {
	return func(rel string) bool {
		real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
		realRoot, rerr := filepath.EvalSymlinks(root)
		return err == nil && rerr == nil && strings.HasPrefix(real, filepath.Join(realRoot, "dotfiles")+string(filepath.Separator))
	}
}

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			runScript(t, string(data))
		})
	}
}

type command struct {
	line int
	name string
	args []string
}

// parseScript splits a script into commands and the expected output. Lines
// starting with # are comments; an argument may be a Go-quoted string.
func parseScript(t *testing.T, s string) (cmds []command, want []string, wantRescan bool) {
	t.Helper()
	output := false
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line == "Output:" {
			output = true
			continue
		}
		args, err := splitArgs(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if output {
			if len(args) == 1 && args[0] == "rescan" {
				wantRescan = true
			} else if len(args) == 1 {
				want = append(want, args[0])
			} else {
				t.Fatalf("line %d: want one path per output line", i+1)
			}
			continue
		}
		cmds = append(cmds, command{line: i + 1, name: args[0], args: args[1:]})
	}
	return cmds, want, wantRescan
}

func splitArgs(line string) ([]string, error) {
	var args []string
	for line = strings.TrimLeft(line, " \t"); line != ""; line = strings.TrimLeft(line, " \t") {
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, err
			}
			s, _ := strconv.Unquote(q)
			args = append(args, s)
			line = line[len(q):]
			continue
		}
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		args = append(args, line[:end])
		line = line[end:]
	}
	return args, nil
}

// collector records every Batch a Watcher emits.
type collector struct {
	mu      sync.Mutex
	batches []received
	closed  bool
}

type received struct {
	Batch
	at time.Time
}

func collect(w *Watcher) *collector {
	c := &collector{}
	go func() {
		for b := range w.Batches() {
			c.mu.Lock()
			c.batches = append(c.batches, received{b, time.Now()})
			c.mu.Unlock()
		}
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
	}()
	return c
}

// since returns the batches received from index i on, and how many there are
// in all.
func (c *collector) since(i int) ([]received, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.batches[min(i, len(c.batches)):]), len(c.batches)
}

// poll calls cond until it returns true or the script timeout passes.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !eventually(cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// eventually reports whether cond became true within the script timeout.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(scriptTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// onLoop runs f on the watcher's own goroutine and waits for it.
func onLoop(t *testing.T, w *Watcher, f func()) {
	t.Helper()
	done := make(chan struct{})
	select {
	case w.inspect <- func() { f(); close(done) }:
		<-done
	case <-w.done:
		t.Fatal("watcher stopped")
	case <-time.After(scriptTimeout):
		t.Fatal("watcher loop does not answer")
	}
}

func runScript(t *testing.T, script string) {
	cmds, want, wantRescan := parseScript(t, script)
	root, home := t.TempDir(), t.TempDir()
	abs := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return filepath.Join(home, filepath.FromSlash(rest))
		}
		return filepath.Join(root, filepath.FromSlash(p))
	}
	for i, p := range want {
		if strings.HasPrefix(p, "~/") {
			want[i] = abs(p)
		}
	}
	slices.Sort(want)

	var (
		w     *Watcher
		c     *collector
		start int // index of the first batch after the initial rescan
	)
	for _, cmd := range cmds {
		fail := func(format string, a ...any) {
			t.Helper()
			t.Fatalf("line %d: %s: %s", cmd.line, cmd.name, fmt.Sprintf(format, a...))
		}
		nargs := func(n int) {
			t.Helper()
			if len(cmd.args) != n {
				fail("want %d arguments, have %q", n, cmd.args)
			}
		}
		check := func(err error) {
			t.Helper()
			if err != nil {
				fail("%v", err)
			}
		}
		switch cmd.name {
		case "watch":
			nargs(0)
			var err error
			w, err = New(Options{
				Root: root, Debounce: scriptDebounce, Rescan: -1,
				WatchDir: testWatchDir, Match: testMatch, FollowLink: followDotfiles(root),
				Extra: []string{filepath.Join(home, "memory", "MEMORY.md")},
			})
			check(err)
			c = runCollect(t, w)
			poll(t, "initial rescan", func() bool {
				bs, n := c.since(0)
				start = n
				return n > 0 && bs[0].Rescan
			})
			if bs, _ := c.since(0); len(bs[0].Paths) != 0 {
				fail("initial batch has paths %q", bs[0].Paths)
			}
		case "write", "append":
			nargs(2)
			flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if cmd.name == "append" {
				flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			if w == nil { // setup: create the parents too
				check(os.MkdirAll(filepath.Dir(abs(cmd.args[0])), 0o755))
			}
			f, err := os.OpenFile(abs(cmd.args[0]), flag, 0o644)
			check(err)
			_, err = f.WriteString(cmd.args[1])
			check(err)
			check(f.Close())
		case "mkdir":
			nargs(1)
			check(os.MkdirAll(abs(cmd.args[0]), 0o755))
		case "rm":
			nargs(1)
			check(os.Remove(abs(cmd.args[0])))
		case "rmdir": // rm -r
			nargs(1)
			check(os.RemoveAll(abs(cmd.args[0])))
		case "mv":
			nargs(2)
			check(os.Rename(abs(cmd.args[0]), abs(cmd.args[1])))
		case "chmod":
			nargs(2)
			mode, err := strconv.ParseUint(cmd.args[0], 8, 32)
			check(err)
			check(os.Chmod(abs(cmd.args[1]), os.FileMode(mode)))
		case "symlink": // symlink TARGET LINK; TARGET is used as written
			nargs(2)
			check(os.Symlink(cmd.args[0], abs(cmd.args[1])))
		case "sed": // the real sed -i: temp file sedXXXXXX beside the target, then rename
			nargs(2)
			if _, err := exec.LookPath("sed"); err != nil {
				t.Skip("no sed")
			}
			out, err := exec.Command("sed", "-i", cmd.args[0], abs(cmd.args[1])).CombinedOutput()
			if err != nil {
				fail("%v: %s", err, out)
			}
		case "fill": // fill DIR N: create DIR and N phase files in it in a tight loop
			nargs(2)
			n, err := strconv.Atoi(cmd.args[1])
			check(err)
			dir := abs(cmd.args[0])
			check(os.MkdirAll(dir, 0o755))
			for i := 1; i <= n; i++ {
				check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("phase-%02d-step.json", i)), []byte("{}"), 0o644))
			}
		case "watching", "unwatched": // wait until the directory is (not) watched
			nargs(1)
			dir, want := abs(cmd.args[0]), cmd.name == "watching"
			poll(t, cmd.name+" "+cmd.args[0], func() bool {
				var got bool
				onLoop(t, w, func() { got = w.watched[dir] })
				return got == want
			})
		case "settle": // wait until the watcher has nothing pending or undelivered
			nargs(0)
			poll(t, "settle", func() bool {
				var idle bool
				onLoop(t, w, func() { idle = len(w.pending) == 0 && w.asked == nil && !w.hasReady() })
				return idle
			})
		default:
			fail("unknown command")
		}
	}
	if w == nil {
		t.Fatal("script never says watch")
	}

	union := func() ([]string, bool) {
		bs, _ := c.since(start)
		var paths []string
		rescan := false
		for _, b := range bs {
			paths = append(paths, b.Paths...)
			rescan = rescan || b.Rescan
		}
		slices.Sort(paths)
		return slices.Compact(paths), rescan
	}
	// Wait for every expected path, then for quiet, so extra paths show.
	var lastN int
	if !eventually(func() bool {
		got, rescan := union()
		_, lastN = c.since(0)
		return containsAll(got, want) && (rescan || !wantRescan)
	}) {
		got, rescan := union()
		t.Fatalf("timed out: emitted paths:\n\t%s\nrescan %v\nwant:\n\t%s\nrescan %v",
			strings.Join(got, "\n\t"), rescan, strings.Join(want, "\n\t"), wantRescan)
	}
	quietSince := time.Now()
	poll(t, "quiet", func() bool {
		if _, n := c.since(0); n != lastN {
			lastN, quietSince = n, time.Now()
		}
		return time.Since(quietSince) >= scriptQuiet
	})
	got, rescan := union()
	if !slices.Equal(got, want) {
		t.Errorf("emitted paths:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if rescan != wantRescan {
		t.Errorf("rescan = %v, want %v", rescan, wantRescan)
	}
}

func containsAll(have, want []string) bool {
	for _, p := range want {
		if _, ok := slices.BinarySearch(have, p); !ok {
			return false
		}
	}
	return true
}
