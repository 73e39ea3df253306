package watcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
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

// attack36d M2: a polled folder swapped for a symbolic link to a folder
// outside the work tree is not polled through the link: its kept file is
// reported (read as deleted), its poll stops, and a kept-looking file in
// the outside folder, there before the swap or made after it, is never
// reported.
func TestWatchLimitPolledSwappedForLink(t *testing.T) {
	w, _, _, s2, index := limitTree(t, 5*time.Millisecond)
	outside := t.TempDir()
	writePhase(t, outside, "outside before")
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	const kept = "PhaseOutputs/s2/phase-01-query.json"
	_, n := c.since(0)
	writePhase(t, s2, "one")
	waitBatch(t, c, n, "the polled file", hasPath(kept))

	_, n = c.since(0)
	if err := os.RemoveAll(s2); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, s2); err != nil {
		t.Fatal(err)
	}
	poll(t, "the swapped folder polled no more", func() bool {
		gone := false
		onLoop(t, w, func() { gone = w.polled[s2] == nil })
		return gone
	})
	writePhase(t, outside, "outside after")
	if err := os.WriteFile(filepath.Join(outside, "phase-02-outside.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	onLoop(t, w, func() { w.poll(time.Now(), true) })
	// git's index in the polled .git is reported after anything the polls
	// before it found
	if err := os.WriteFile(index, []byte("after the swap"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "git's index after the swap", hasPath(index))
	bs, _ := c.since(n)
	reported := false
	for _, b := range bs {
		reported = reported || slices.Contains(b.Paths, kept)
		if slices.Contains(b.Paths, "PhaseOutputs/s2/phase-02-outside.json") {
			t.Errorf("a file of the folder outside the work tree is reported: %v", b.Paths)
		}
	}
	if !reported {
		t.Errorf("the swapped folder's kept file is not reported (to be read as deleted)")
	}
	onLoop(t, w, func() {
		if w.polled[s2] != nil {
			t.Errorf("the link is polled again")
		}
	})
}

// attack36d M2: a polled folder replaced by another folder (rm -r; mkdir)
// is polled afresh, as a watch of the new folder would be added.
func TestWatchLimitPolledReplaced(t *testing.T) {
	w, src, _, s2, _ := limitTree(t, 5*time.Millisecond)
	src.failAdd[filepath.Dir(s2)] = syscall.ENOSPC // PhaseOutputs polled: no event of its own
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	const kept = "PhaseOutputs/s2/phase-01-query.json"
	var ino uint64
	onLoop(t, w, func() { ino = w.polled[s2].ino })
	// made aside first, so that it is another inode (rm -r; mkdir may get
	// the same one back, which a poll cannot tell from the folder before)
	aside := filepath.Join(w.root, "s2.new")
	if err := os.Mkdir(aside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(s2); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, s2); err != nil {
		t.Fatal(err)
	}
	poll(t, "the new folder polled", func() bool {
		ok := false
		onLoop(t, w, func() { ok = w.polled[s2] != nil && w.polled[s2].ino != ino })
		return ok
	})
	_, n := c.since(0)
	writePhase(t, s2, "new")
	waitBatch(t, c, n, "the new folder's file", hasPath(kept))
}

// attack36d L1: a poll of a large folder whose entries did not change
// lists none of them and lstats only its kept file; one whose entries
// changed is listed, and a large one no more often than pollStride allows.
func TestWatchLimitPollCost(t *testing.T) {
	w, _, _, s2, _ := limitTree(t, time.Hour) // polled only when the test says
	const others = 2*pollStride + 10
	for i := range others {
		if err := os.WriteFile(filepath.Join(s2, fmt.Sprintf("n%06d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writePhase(t, s2, "one")
	// The folder's stamps are trusted as soon as they are older than a
	// listing: the test's changes are made between polls, not during one.
	old := racyStamp
	racyStamp = 0
	t.Cleanup(func() { racyStamp = old })
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	const kept = "PhaseOutputs/s2/phase-01-query.json"
	tick := func() (listed, lstats int) {
		onLoop(t, w, func() {
			before := w.pollWork
			w.poll(time.Now(), false)
			listed, lstats = w.pollWork.listed-before.listed, w.pollWork.lstats-before.lstats
		})
		return listed, lstats
	}
	for i := range 3 {
		// one lstat for .git's index (an extra file of a polled .git), one for s2's kept file
		if listed, lstats := tick(); listed != 0 || lstats != 2 {
			t.Fatalf("poll %d of an unchanged folder of %d entries: %d entries listed, %d lstats; want 0 and 2", i, others+1, listed, lstats)
		}
	}
	_, n := c.since(0)
	writePhase(t, s2, "two") // a write changes no entry: still only lstat'ed
	if listed, _ := tick(); listed != 0 {
		t.Fatalf("a kept file's write made a listing of %d entries", listed)
	}
	waitBatch(t, c, n, "the kept file's second version", hasPath(kept))

	_, n = c.since(0)
	const made = "PhaseOutputs/s2/phase-02-made.json"
	if err := os.WriteFile(filepath.Join(w.root, made), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if listed, _ := tick(); listed != others+2 {
		t.Fatalf("a folder with an entry made: %d entries listed, want %d", listed, others+2)
	}
	waitBatch(t, c, n, "the file made", hasPath(made))
	// changed again right away: 20 000 entries are listed every other poll
	if err := os.Remove(filepath.Join(w.root, made)); err != nil {
		t.Fatal(err)
	}
	if listed, _ := tick(); listed != 0 {
		t.Fatalf("a folder of %d entries listed again at the next poll", others+1)
	}
	if listed, _ := tick(); listed != others+1 {
		t.Fatalf("a folder of %d entries changed: %d listed at the second poll", others+1, listed)
	}
}

// attack36d M2: a polled folder whose parent is moved out of the work tree
// and replaced by a link to it is the same directory, but reached out of
// the work tree only: its poll stops, and what is made in it is not reported.
func TestWatchLimitPolledMovedOut(t *testing.T) {
	w, _, _, s2, index := limitTree(t, 5*time.Millisecond)
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	phase := filepath.Dir(s2)
	moved := filepath.Join(t.TempDir(), "PhaseOutputs")
	_, n := c.since(0)
	if err := os.Rename(phase, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, phase); err != nil {
		t.Fatal(err)
	}
	poll(t, "the folder moved out polled no more", func() bool {
		gone := false
		onLoop(t, w, func() { gone = w.polled[s2] == nil })
		return gone
	})
	writePhase(t, filepath.Join(moved, "s2"), "outside")
	onLoop(t, w, func() { w.poll(time.Now(), true) })
	if err := os.WriteFile(index, []byte("after the move"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "git's index after the move", hasPath(index))
	bs, _ := c.since(n)
	for _, b := range bs {
		if slices.Contains(b.Paths, "PhaseOutputs/s2/phase-01-query.json") {
			t.Errorf("a file of the folder moved out of the work tree is reported: %v", b.Paths)
		}
	}
}
