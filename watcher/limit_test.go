package watcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/strata-dev/strata/internal/syncbuf"
)

// fakeProcSys makes the inotify sysctls read as watches and instances.
func fakeProcSys(t *testing.T, watches, instances int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "fs", "inotify"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"max_user_watches": watches, "max_user_instances": instances} {
		if err := os.WriteFile(filepath.Join(dir, "fs", "inotify", name), []byte(fmt.Sprintln(n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := procSys
	procSys = dir
	t.Cleanup(func() { procSys = old })
}

// limitTree is a tree with two session folders, the second of which (and
// the .git folder of the extra file .git/index) the inotify watch limit
// keeps from being watched: adding their watches fails with ENOSPC, as
// inotify_add_watch does at fs.inotify.max_user_watches.
func limitTree(t *testing.T, every time.Duration) (w *Watcher, src *fakeSource, log *syncbuf.Buffer, s2, index string) {
	t.Helper()
	fakeProcSys(t, 6, 128)
	root := t.TempDir()
	s1, s2 := filepath.Join(root, "PhaseOutputs", "s1"), filepath.Join(root, "PhaseOutputs", "s2")
	gitDir := filepath.Join(root, ".git")
	for _, d := range []string{s1, s2, gitDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	index = filepath.Join(gitDir, "index")
	src = newFakeSource()
	src.failAdd[s2] = syscall.ENOSPC
	src.failAdd[gitDir] = syscall.ENOSPC
	log = &syncbuf.Buffer{}
	w, err := newWithSource(Options{
		Root: root, WatchDir: testWatchDir, Match: testMatch, Rescan: -1, Debounce: time.Millisecond,
		Extra: []string{index}, Logger: slog.New(slog.NewTextHandler(log, nil)),
	}, src)
	if err != nil {
		t.Fatal(err)
	}
	w.pollEvery = every
	return w, src, log, s2, index
}

// writePhase writes a kept file of s2 (a version of its own).
func writePhase(t *testing.T, dir, v string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "phase-01-query.json"), []byte(`{"v":"`+v+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// attack36 M3: a folder the inotify watch limit keeps from being watched is
// polled, each of its versions reported, with one warning naming the limit.
func TestWatchLimitPolled(t *testing.T) {
	w, src, log, s2, index := limitTree(t, 5*time.Millisecond)
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	const kept = "PhaseOutputs/s2/phase-01-query.json"
	for _, v := range []string{"one", "second"} {
		_, n := c.since(0)
		writePhase(t, s2, v)
		waitBatch(t, c, n, "version "+v+" of the polled file", hasPath(kept))
	}
	_, n := c.since(0)
	if err := os.WriteFile(index, []byte("index"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "git's index in a polled .git", hasPath(index))

	// a rescan tries the watches again: no second warning for the same folders
	_, n = c.since(0)
	sendErr(t, w, src, fmt.Errorf("read: %w", fsnotify.ErrEventOverflow))
	waitBatch(t, c, n, "rescan", func(b Batch) bool { return b.Rescan })
	onLoop(t, w, func() {})

	out := log.String()
	want := fmt.Sprintf("inotify watch limit reached (fs.inotify.max_user_watches=6, read from %s): "+
		"2 folders (.git, PhaseOutputs/s2) are polled every 5ms instead; raise it with sysctl fs.inotify.max_user_watches=524288",
		filepath.Join(procSys, "fs", "inotify", "max_user_watches"))
	if got := strings.Count(out, "inotify watch limit reached"); got != 1 || !strings.Contains(out, want) {
		t.Errorf("want the warning once:\n%s\nlog:\n%s", want, out)
	}
	if strings.Contains(out, "no space left on device") {
		t.Errorf("the raw ENOSPC text is logged:\n%s", out)
	}
}

// attack36 M3: what changed in a polled folder since its last look is in
// the final batch at stop, as a watched folder's pending paths are.
func TestWatchLimitPolledAtStop(t *testing.T) {
	w, _, _, s2, _ := limitTree(t, time.Hour) // no poll but the one at stop
	c := collect(w)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(context.Background()) }()
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	onLoop(t, w, func() {})
	_, n := c.since(0)
	writePhase(t, s2, "one")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "the polled file in the final batch", hasPath("PhaseOutputs/s2/phase-01-query.json"))
}

// attack36 M3: a folder made in a polled one is watched or polled in turn,
// and a polled folder removed reports its kept files (read as deleted).
func TestWatchLimitPolledTree(t *testing.T) {
	w, src, _, s2, _ := limitTree(t, 5*time.Millisecond)
	phase := filepath.Dir(s2)
	s3 := filepath.Join(phase, "s3")
	src.failAdd[phase] = syscall.ENOSPC
	src.failAdd[s3] = syscall.ENOSPC
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	// s3 is made with no event (its parent is polled, not watched)
	_, n := c.since(0)
	if err := os.Mkdir(s3, 0o755); err != nil {
		t.Fatal(err)
	}
	writePhase(t, s3, "one")
	waitBatch(t, c, n, "the file of a folder made in a polled one", hasPath("PhaseOutputs/s3/phase-01-query.json"))
	onLoop(t, w, func() {
		if w.polled[s3] == nil {
			t.Errorf("a folder made in a polled folder is not polled")
		}
	})
	_, n = c.since(0)
	writePhase(t, s3, "second")
	waitBatch(t, c, n, "its second version", hasPath("PhaseOutputs/s3/phase-01-query.json"))
	_, n = c.since(0)
	if err := os.RemoveAll(s3); err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "its file after the folder was removed", hasPath("PhaseOutputs/s3/phase-01-query.json"))
	poll(t, "s3 polled no more", func() bool {
		gone := false
		onLoop(t, w, func() { gone = w.polled[s3] == nil })
		return gone
	})
}

// attack36 M3 (LOW part): EMFILE from inotify_init1 names the instance limit.
func TestNewInstanceLimit(t *testing.T) {
	fakeProcSys(t, 6, 128)
	old := newSource
	newSource = func() (source, error) { return nil, fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE) }
	t.Cleanup(func() { newSource = old })
	_, err := New(Options{Root: t.TempDir()})
	want := fmt.Sprintf("watcher: inotify instance limit reached (fs.inotify.max_user_instances=128, read from %s), or this process's open-file limit (ulimit -n): raise it with sysctl fs.inotify.max_user_instances=1024, or stop other programs watching files",
		filepath.Join(procSys, "fs", "inotify", "max_user_instances"))
	if err == nil || err.Error() != want || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
