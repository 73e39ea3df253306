package watcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/strata-dev/strata/internal/syncbuf"
)

// fakeSource lets a test deliver events and errors the kernel will not
// produce on demand, and fail chosen watches.
type fakeSource struct {
	events chan fsnotify.Event
	errs   chan error

	mu      sync.Mutex // guards the maps: tests read them while Run writes them
	added   map[string]int
	failAdd map[string]error
	onAdd   func(dir string) // run as each watch is added, before it takes (set before the watcher runs)
}

func newFakeSource() *fakeSource {
	return &fakeSource{
		events:  make(chan fsnotify.Event),
		errs:    make(chan error),
		added:   make(map[string]int),
		failAdd: make(map[string]error),
	}
}

func (s *fakeSource) Add(dir string) error {
	if s.onAdd != nil {
		s.onAdd(dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failAdd[dir]; err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return err // as inotify_add_watch on a folder gone meanwhile
	}
	s.added[dir]++
	return nil
}

func (s *fakeSource) timesAdded(dir string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.added[dir]
}

func (s *fakeSource) Remove(string) error           { return nil }
func (s *fakeSource) Events() <-chan fsnotify.Event { return s.events }
func (s *fakeSource) Errors() <-chan error          { return s.errs }
func (s *fakeSource) Close() error                  { return nil }

// startFake runs a Watcher on a fake source over a fresh tree and waits for
// its initial rescan batch.
func startFake(t *testing.T, opts Options) (*Watcher, *fakeSource, *collector) {
	t.Helper()
	src := newFakeSource()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	if opts.Rescan == 0 {
		opts.Rescan = -1
	}
	w, err := newWithSource(opts, src)
	if err != nil {
		t.Fatal(err)
	}
	c := runCollect(t, w)
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	return w, src, c
}

// runCollect runs w until the test ends, collecting its batches.
func runCollect(t *testing.T, w *Watcher) *collector {
	t.Helper()
	c := collect(w)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(context.Background()) }()
	t.Cleanup(func() {
		w.Close()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return c
}

// newStepped makes a Watcher on src that a test drives itself, calling
// handle and settle with the times it chooses (its timer never fires).
func newStepped(t *testing.T, opts Options, src *fakeSource) *Watcher {
	t.Helper()
	w, err := newWithSource(opts, src)
	if err != nil {
		t.Fatal(err)
	}
	w.timer = time.NewTimer(time.Hour)
	t.Cleanup(func() { w.timer.Stop() })
	return w
}

// send delivers ev and waits until the watcher has handled it.
func send(t *testing.T, w *Watcher, src *fakeSource, ev fsnotify.Event) {
	t.Helper()
	select {
	case src.events <- ev:
	case <-time.After(scriptTimeout):
		t.Fatal("watcher does not read events")
	}
	onLoop(t, w, func() {})
}

func sendErr(t *testing.T, w *Watcher, src *fakeSource, err error) {
	t.Helper()
	select {
	case src.errs <- err:
	case <-time.After(scriptTimeout):
		t.Fatal("watcher does not read errors")
	}
	onLoop(t, w, func() {})
}

// waitBatch waits for a batch after index from that satisfies ok.
func waitBatch(t *testing.T, c *collector, from int, what string, ok func(Batch) bool) {
	t.Helper()
	poll(t, what, func() bool {
		bs, _ := c.since(from)
		return slices.ContainsFunc(bs, func(b received) bool { return ok(b.Batch) })
	})
}

func hasPath(p string) func(Batch) bool {
	return func(b Batch) bool { return slices.Contains(b.Paths, p) }
}

func TestDue(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	d := 50 * time.Millisecond
	for _, tc := range []struct {
		name        string
		first, last time.Duration // after t0
		want        time.Duration
	}{
		{"single event", 0, 0, d},
		{"quiet after last", 0, 100 * time.Millisecond, 150 * time.Millisecond},
		{"bounded by first", 0, 480 * time.Millisecond, 500 * time.Millisecond},
		{"at the bound", 0, 450 * time.Millisecond, 500 * time.Millisecond},
	} {
		p := pending{first: t0.Add(tc.first), last: t0.Add(tc.last)}
		if got := p.due(d).Sub(t0); got != tc.want {
			t.Errorf("%s: due at %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDebounceClock drives the owner's methods with a synthetic clock, so the
// debounce rules are checked exactly, without real time.
func TestDebounceClock(t *testing.T) {
	const d = 50 * time.Millisecond
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	newW := func(t *testing.T) *Watcher {
		return newStepped(t, Options{Root: t.TempDir(), Debounce: d}, newFakeSource())
	}
	ready := func(w *Watcher, key string) bool { return w.ready[key] }

	t.Run("postponed while events come", func(t *testing.T) {
		w := newW(t)
		w.touch("a", "/r", at(0))
		w.settle(at(40))
		w.touch("a", "/r", at(40))
		w.settle(at(80))
		if ready(w, "a") {
			t.Fatal("settled 40ms after its last event")
		}
		w.settle(at(90))
		if !ready(w, "a") {
			t.Fatal("not settled 50ms after its last event")
		}
	})
	t.Run("bounded under continuous writes", func(t *testing.T) {
		w := newW(t)
		for ms := 0; ms <= 1000; ms += 10 {
			w.touch("a", "/r", at(ms))
			w.settle(at(ms))
			if ready(w, "a") {
				if ms != 500 {
					t.Fatalf("emitted at %dms, want at 10 debounces (500ms)", ms)
				}
				return
			}
		}
		t.Fatal("never emitted under continuous writes")
	})
	t.Run("busy when emitted at the bound", func(t *testing.T) {
		// attack19-watch 7: read at the bound, a file still being written
		// may be half-written; the batch says so (Busy), and once the
		// writer is quiet the path comes out again, not busy
		w := newW(t)
		w.touch("a", "/r", at(0))
		w.touch("b", "/r", at(0))
		for ms := 10; ms <= 500; ms += 10 {
			w.touch("a", "/r", at(ms))
		}
		w.settle(at(500))
		if b := w.batch(); !slices.Equal(b.Paths, []string{"a", "b"}) || !slices.Equal(b.Busy, []string{"a"}) {
			t.Fatalf("batch %+v, want a and b, a busy", b)
		}
		clear(w.ready)
		clear(w.busy)
		w.readyBatch = nil
		w.settle(at(550)) // the writer stopped at 500: a comes out again, whole
		if b := w.batch(); !slices.Equal(b.Paths, []string{"a"}) || len(b.Busy) != 0 {
			t.Fatalf("batch %+v, want a, quiet", b)
		}
	})
	t.Run("temp files beside postpone", func(t *testing.T) {
		w := newW(t)
		w.touch("a", "/r", at(0))
		w.touch("b", "/other", at(0))
		w.postpone("/r", at(40)) // e.g. .a.swp written
		w.settle(at(60))
		if ready(w, "a") || !ready(w, "b") {
			t.Fatalf("a ready %v (want false), b ready %v (want true)", ready(w, "a"), ready(w, "b"))
		}
		w.settle(at(90))
		if !ready(w, "a") {
			t.Fatal("a not settled after the temp file went quiet")
		}
	})
	t.Run("timer armed for the earliest", func(t *testing.T) {
		w := newW(t)
		w.touch("a", "/r", at(0))
		w.touch("b", "/r", at(30))
		if want := at(50); !w.armedAt.Equal(want) {
			t.Fatalf("armed at %v, want %v", w.armedAt.Sub(t0), want.Sub(t0))
		}
		w.settle(at(50))
		if want := at(80); !w.armedAt.Equal(want) {
			t.Fatalf("re-armed at %v, want %v", w.armedAt.Sub(t0), want.Sub(t0))
		}
	})
}

// TestMergeBusy: of two batches merged, the later says whether a path it
// reports is busy.
func TestMergeBusy(t *testing.T) {
	a := Batch{Paths: []string{"x", "y"}, Busy: []string{"x", "y"}}
	b := Batch{Paths: []string{"y", "z"}, Busy: []string{"z"}}
	if m := merge(a, b); !slices.Equal(m.Paths, []string{"x", "y", "z"}) || !slices.Equal(m.Busy, []string{"x", "z"}) {
		t.Fatalf("merged %+v", m)
	}
}

func TestOverflowAsksForRescan(t *testing.T) {
	w, src, c := startFake(t, Options{})
	_, n := c.since(0)
	sendErr(t, w, src, fmt.Errorf("read: %w", fsnotify.ErrEventOverflow))
	waitBatch(t, c, n, "rescan after overflow", func(b Batch) bool { return b.Rescan })
	// The watch set was rebuilt, since directory events may have been lost.
	if got := src.timesAdded(w.root); got < 2 {
		t.Errorf("root added %d times, want a re-add after the overflow", got)
	}
}

func TestErrorsAreSurvived(t *testing.T) {
	var log syncbuf.Buffer
	w, src, c := startFake(t, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	_, n := c.since(0)
	sendErr(t, w, src, errors.New("boom"))
	p := filepath.Join(w.root, "MEMORY.md")
	send(t, w, src, fsnotify.Event{Name: p, Op: fsnotify.Write})
	waitBatch(t, c, n, "MEMORY.md after an error", hasPath("MEMORY.md"))
	if bs, _ := c.since(n); slices.ContainsFunc(bs, func(b received) bool { return b.Rescan }) {
		t.Error("an ordinary error asked for a rescan")
	}
	if !strings.Contains(log.String(), "boom") {
		t.Errorf("error not logged; log:\n%s", log.String())
	}
}

func TestFailedWatch(t *testing.T) {
	var log syncbuf.Buffer
	root := t.TempDir()
	denied, gone := filepath.Join(root, "PhaseOutputs", "denied"), filepath.Join(root, "PhaseOutputs", "gone")
	for _, d := range []string{denied, gone} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, src, c := startFake(t, Options{
		Root: root, WatchDir: testWatchDir, Match: testMatch,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	src.mu.Lock()
	src.failAdd[denied] = fmt.Errorf("add %s: %w", denied, syscall.EACCES)
	src.failAdd[gone] = fmt.Errorf("add %s: %w", gone, syscall.ENOENT)
	src.mu.Unlock()

	_, n := c.since(0)
	send(t, w, src, fsnotify.Event{Name: gone, Op: fsnotify.Create})
	send(t, w, src, fsnotify.Event{Name: filepath.Join(root, "MEMORY.md"), Op: fsnotify.Create})
	waitBatch(t, c, n, "MEMORY.md", hasPath("MEMORY.md"))
	if bs, _ := c.since(n); slices.ContainsFunc(bs, func(b received) bool { return b.Rescan }) {
		t.Error("a vanished directory asked for a rescan")
	}

	_, n = c.since(0)
	send(t, w, src, fsnotify.Event{Name: denied, Op: fsnotify.Create})
	waitBatch(t, c, n, "rescan after a failed watch", func(b Batch) bool { return b.Rescan })
	if !strings.Contains(log.String(), "permission denied") {
		t.Errorf("failed watch not logged; log:\n%s", log.String())
	}
	// Still running.
	_, n = c.since(0)
	send(t, w, src, fsnotify.Event{Name: filepath.Join(root, "MEMORY.md"), Op: fsnotify.Write})
	waitBatch(t, c, n, "MEMORY.md after a failed watch", hasPath("MEMORY.md"))
}

func TestChmodIgnored(t *testing.T) {
	w, src, _ := startFake(t, Options{})
	p := filepath.Join(w.root, "a.json")
	send(t, w, src, fsnotify.Event{Name: p, Op: fsnotify.Chmod})
	onLoop(t, w, func() {
		if len(w.pending) != 0 || w.asked != nil {
			t.Errorf("chmod made %v pending", w.pending)
		}
	})
}

// TestChmodReread: a chmod makes a kept path pending only when the caller
// wants it read again (its last read failed); other chmods stay dropped.
func TestChmodReread(t *testing.T) {
	var asked []string
	w, src, c := startFake(t, Options{Reread: func(key string) bool {
		asked = append(asked, key) // on Run's goroutine
		return key == "unreadable.json"
	}})
	_, n := c.since(0)
	send(t, w, src, fsnotify.Event{Name: filepath.Join(w.root, "readable.json"), Op: fsnotify.Chmod})
	onLoop(t, w, func() {
		if len(w.pending) != 0 {
			t.Errorf("an ordinary chmod made %v pending", w.pending)
		}
	})
	send(t, w, src, fsnotify.Event{Name: filepath.Join(w.root, "unreadable.json"), Op: fsnotify.Chmod})
	waitBatch(t, c, n, "the chmodded unreadable file", hasPath("unreadable.json"))
	if bs, _ := c.since(n); slices.ContainsFunc(bs, hasPathReceived("readable.json")) {
		t.Error("the ordinary chmod was emitted")
	}
	onLoop(t, w, func() {
		if want := []string{"readable.json", "unreadable.json"}; !slices.Equal(asked, want) {
			t.Errorf("Reread asked about %q, want %q", asked, want)
		}
	})
}

func hasPathReceived(p string) func(received) bool {
	return func(b received) bool { return slices.Contains(b.Paths, p) }
}

func TestBurstEmittedOnce(t *testing.T) {
	// A long debounce, so that a slow machine does not split the burst.
	w, src, c := startFake(t, Options{Debounce: 300 * time.Millisecond})
	_, n := c.since(0)
	p := filepath.Join(w.root, "a.json")
	for _, op := range []fsnotify.Op{fsnotify.Create, fsnotify.Write, fsnotify.Write, fsnotify.Write | fsnotify.Chmod, fsnotify.Write} {
		send(t, w, src, fsnotify.Event{Name: p, Op: op})
	}
	waitBatch(t, c, n, "a.json", hasPath("a.json"))
	send(t, w, src, fsnotify.Event{Name: filepath.Join(w.root, "b.json"), Op: fsnotify.Write})
	waitBatch(t, c, n, "b.json", hasPath("b.json"))
	bs, _ := c.since(n)
	count := 0
	for _, b := range bs {
		if hasPath("a.json")(b.Batch) {
			count++
		}
	}
	if count != 1 {
		t.Errorf("a.json emitted %d times, want once: %v", count, bs)
	}
}

func TestLatencyBoundedUnderContinuousWrites(t *testing.T) {
	const d = 20 * time.Millisecond
	w, src, c := startFake(t, Options{Debounce: d})
	_, n := c.since(0)
	p := filepath.Join(w.root, "a.json")
	// Write every d/4 for 40 debounces; the path must come out meanwhile.
	// (On a stalled machine it may settle normally instead; either way it is
	// emitted before the writes stop.)
	for end := time.Now().Add(40 * d); time.Now().Before(end); time.Sleep(d / 4) {
		send(t, w, src, fsnotify.Event{Name: p, Op: fsnotify.Write})
	}
	if bs, _ := c.since(n); !slices.ContainsFunc(bs, func(b received) bool { return hasPath("a.json")(b.Batch) }) {
		t.Fatal("a continuously written path was never emitted while written")
	}
}

func TestCloseFlushesPending(t *testing.T) {
	t.Run("fake", func(t *testing.T) {
		src := newFakeSource()
		w, err := newWithSource(Options{Root: t.TempDir(), Debounce: time.Hour, Rescan: -1}, src)
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() { errc <- w.Run(context.Background()) }()
		// Nobody reads Batches yet: the initial rescan waits in the channel,
		// and Close must still not block.
		send(t, w, src, fsnotify.Event{Name: filepath.Join(w.root, "a.json"), Op: fsnotify.Write})
		send(t, w, src, fsnotify.Event{Name: filepath.Join(w.root, "b.json"), Op: fsnotify.Create})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("run: %v", err)
		}
		var got []Batch
		for b := range w.Batches() {
			got = append(got, b)
		}
		want := []Batch{{Paths: []string{"a.json", "b.json"}, Rescan: true}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("batches %v, want %v", got, want)
		}
	})
	t.Run("events on their way", func(t *testing.T) {
		// The event is queued when the stop comes; whichever the loop picks
		// first, the path must be in the final batch.
		for range 20 {
			src := newFakeSource()
			src.events = make(chan fsnotify.Event, 1)
			w, err := newWithSource(Options{Root: t.TempDir(), Rescan: -1}, src)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- w.Run(ctx) }()
			onLoop(t, w, func() {
				src.events <- fsnotify.Event{Name: filepath.Join(w.root, "a.json"), Op: fsnotify.Write}
				cancel()
			})
			if err := <-errc; err != nil {
				t.Fatalf("run: %v", err)
			}
			var got []string
			for b := range w.Batches() {
				got = append(got, b.Paths...)
			}
			if !slices.Equal(got, []string{"a.json"}) {
				t.Fatalf("flushed %q, want a.json", got)
			}
		}
	})
	t.Run("real", func(t *testing.T) {
		root := t.TempDir()
		w, err := New(Options{Root: root, Debounce: time.Hour, Rescan: -1})
		if err != nil {
			t.Fatal(err)
		}
		c := collect(w)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- w.Run(ctx) }()
		poll(t, "initial rescan", func() bool { _, n := c.since(0); return n > 0 })
		if err := os.WriteFile(filepath.Join(root, "a.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		poll(t, "a.json pending", func() bool {
			var ok bool
			onLoop(t, w, func() { ok = w.pending["a.json"] != nil })
			return ok
		})
		cancel() // as on SIGTERM
		if err := <-errc; err != nil {
			t.Fatalf("run: %v", err)
		}
		poll(t, "batches closed", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.closed })
		bs, _ := c.since(1)
		if len(bs) != 1 || !slices.Equal(bs[0].Paths, []string{"a.json"}) {
			t.Fatalf("final batches %v, want one with a.json", bs)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRapidWrites writes 1 000 times to 20 files as fast as it can, with a
// consumer that reads each emitted file as strata does. Every file must be
// emitted after its last write, so what the consumer last read is what was
// last written.
func TestRapidWrites(t *testing.T) {
	const files, writes = 20, 1000
	root := t.TempDir()
	dir := filepath.Join(root, "PhaseOutputs", "s1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := New(Options{Root: root, Rescan: -1, WatchDir: testWatchDir, Match: testMatch})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex // guards lastRead and lastSeen: the consumer and the test both use them
		lastRead = make(map[string]string)
		lastSeen = make(map[string]time.Time)
	)
	started := make(chan struct{})
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for b := range w.Batches() {
			if b.Rescan && len(b.Paths) == 0 {
				select {
				case <-started:
				default:
					close(started)
				}
			}
			for _, p := range b.Paths {
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
				mu.Lock()
				lastRead[p], lastSeen[p] = string(data), time.Now()
				if err != nil {
					lastRead[p] = err.Error()
				}
				mu.Unlock()
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- w.Run(context.Background()) }()
	defer func() {
		w.Close()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
		<-consumed
	}()
	select {
	case <-started:
	case <-time.After(scriptTimeout):
		t.Fatal("no initial rescan")
	}

	lastWrite := make(map[string]time.Time)
	final := make(map[string]string)
	for i := range writes {
		p := fmt.Sprintf("PhaseOutputs/s1/phase-%02d-step.json", i%files+1)
		content := fmt.Sprintf(`{"write":%d}`, i)
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		lastWrite[p], final[p] = time.Now(), content
	}
	ok := eventually(func() bool {
		mu.Lock()
		defer mu.Unlock()
		for p, at := range lastWrite {
			if !lastSeen[p].After(at) || lastRead[p] != final[p] {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	if !ok {
		for p := range lastWrite {
			if !lastSeen[p].After(lastWrite[p]) || lastRead[p] != final[p] {
				t.Errorf("%s: last emitted %v after its last write, read %q, want %q",
					p, lastSeen[p].Sub(lastWrite[p]), lastRead[p], final[p])
			}
		}
	}
	if len(lastSeen) != files {
		t.Errorf("%d files emitted, want %d", len(lastSeen), files)
	}
}

func TestLifecycle(t *testing.T) {
	before := runtime.NumGoroutine()

	t.Run("close without run", func(t *testing.T) {
		w, err := New(Options{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second close: %v", err)
		}
		if err := w.Run(context.Background()); err != nil {
			t.Fatalf("run after close: %v", err)
		}
		if _, open := <-w.Batches(); open {
			t.Fatal("batches open after close")
		}
	})
	t.Run("cancel, close twice, run twice", func(t *testing.T) {
		w, err := New(Options{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- w.Run(ctx) }()
		b := <-w.Batches()
		if !b.Rescan {
			t.Fatalf("first batch %v, want a rescan", b)
		}
		if err := w.Run(ctx); err == nil {
			t.Error("second run did not fail")
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
		if _, open := <-w.Batches(); open {
			t.Fatal("batches open after run returned")
		}
		for range 2 {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("close while running", func(t *testing.T) {
		w, err := New(Options{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() { errc <- w.Run(context.Background()) }()
		<-w.Batches()
		var wg sync.WaitGroup
		for range 2 { // concurrent closes
			wg.Go(func() {
				if err := w.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	})

	// Every goroutine of the watchers (ours and fsnotify's) is gone.
	if !eventually(func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

func TestNewRejects(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{Root: "relative"},
		{Root: filepath.Join(dir, "missing")},
		{Root: file},
		{Root: dir, Extra: []string{"relative/MEMORY.md"}},
	} {
		if w, err := New(opts); err == nil {
			w.Close()
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
}

// TestPeriodicRescan checks the periodic rescan signal, and that it also
// picks up an Extra file's directory that did not exist at start.
func TestPeriodicRescan(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	memDir := filepath.Join(home, ".claude", "projects", "-repo", "memory")
	memory := filepath.Join(memDir, "MEMORY.md")
	w, err := New(Options{Root: root, Rescan: 100 * time.Millisecond, Extra: []string{memory}})
	if err != nil {
		t.Fatal(err)
	}
	c := collect(w)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(context.Background()) }()
	defer func() {
		w.Close()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	poll(t, "three rescans", func() bool {
		bs, _ := c.since(0)
		n := 0
		for _, b := range bs {
			if b.Rescan {
				n++
			}
		}
		return n >= 3
	})

	if err := os.MkdirAll(memDir, 0o755); err != nil {
		t.Fatal(err)
	}
	poll(t, "memory dir watched", func() bool {
		var ok bool
		onLoop(t, w, func() { ok = w.watched[memDir] })
		return ok
	})
	_, n := c.since(0)
	if err := os.WriteFile(memory, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "MEMORY.md as an absolute path", hasPath(memory))
}

// TestReplacedDirRescan drives the owner's methods with a synthetic clock: a
// watched directory renamed away and replaced by a symbolic link (a .claude/
// that dotfiles manage) asks for one rescan, made only once the swap is
// over; a rescan in between would read the kept files as deleted.
func TestReplacedDirRescan(t *testing.T) {
	const d = 50 * time.Millisecond
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	newW := func(t *testing.T) *Watcher {
		return newStepped(t, Options{Root: t.TempDir(), Debounce: d, WatchDir: testWatchDir, Match: testMatch}, newFakeSource())
	}
	t.Run("renamed then linked", func(t *testing.T) {
		w := newW(t)
		claude := filepath.Join(w.root, ".claude")
		if err := os.Mkdir(claude, 0o755); err != nil {
			t.Fatal(err)
		}
		w.watched[claude] = true
		if err := os.Rename(claude, filepath.Join(w.root, "claude.bak")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(t.TempDir(), claude); err != nil {
			t.Fatal(err)
		}
		w.handle(fsnotify.Event{Name: claude, Op: fsnotify.Rename}, at(0))
		if w.readyRescan {
			t.Fatal("the rename asked for a rescan at once, before what replaces the directory arrived")
		}
		if w.watched[claude] {
			t.Fatal("the renamed directory is still watched")
		}
		w.handle(fsnotify.Event{Name: claude, Op: fsnotify.Create}, at(40))
		w.settle(at(60))
		if w.readyRescan {
			t.Fatal("rescan ready 20ms after the link appeared")
		}
		w.settle(at(90))
		if !w.readyRescan {
			t.Fatal("no rescan once the swap was quiet")
		}
		if len(w.pending) != 0 || w.asked != nil {
			t.Fatalf("left pending: %v, rescan %v", w.pending, w.asked)
		}
	})
	t.Run("link where a watched directory could be", func(t *testing.T) {
		w := newW(t)
		if err := os.Symlink("nowhere", filepath.Join(w.root, "PhaseOutputs")); err != nil {
			t.Fatal(err)
		}
		w.handle(fsnotify.Event{Name: filepath.Join(w.root, "PhaseOutputs"), Op: fsnotify.Create}, at(0))
		w.settle(at(50))
		if !w.readyRescan {
			t.Fatal("a link where a watched directory could be asked for no rescan")
		}
	})
	t.Run("link at a kept file", func(t *testing.T) {
		w := newW(t)
		link := filepath.Join(w.root, "MEMORY.md")
		if err := os.Symlink("elsewhere", link); err != nil {
			t.Fatal(err)
		}
		w.handle(fsnotify.Event{Name: link, Op: fsnotify.Create}, at(0))
		w.settle(at(50))
		if w.readyRescan || !w.ready["MEMORY.md"] {
			t.Fatalf("rescan %v, ready %v: want the kept path, read (and refused) by the caller", w.readyRescan, w.ready)
		}
	})
}

// TestExtraDirCreatedLater: an Extra file whose folders do not exist at
// start (a Claude Code project's memory folder, made on its first write)
// is seen as soon as they and it are created, without waiting for a
// rescan: the nearest existing ancestor is watched meanwhile.
func TestExtraDirCreatedLater(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	memDir := filepath.Join(home, ".claude", "projects", "-repo", "memory")
	memory := filepath.Join(memDir, "MEMORY.md")
	_, c := startReal(t, Options{Root: root, Debounce: 20 * time.Millisecond, Rescan: time.Hour, Extra: []string{memory}})
	poll(t, "the first rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 })
	_, n := c.since(0)
	if err := os.MkdirAll(filepath.Join(home, ".claude", "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(memDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(memory, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitBatch(t, c, n, "MEMORY.md in a folder made after the start", hasPath(memory))
}

// TestExtraDirMadeBeforeItsWatch: the folders below the ancestor the
// watcher starts to watch are made just as its watch is added (mkdir -p,
// then the write, on a loaded machine): they send that watch no event, so
// the watcher looks down from it and finds the file. Before, the file
// waited for the next rescan (make test under load failed
// TestExtraDirCreatedLater).
func TestExtraDirMadeBeforeItsWatch(t *testing.T) {
	home := t.TempDir()
	projects := filepath.Join(home, ".claude", "projects")
	memDir := filepath.Join(projects, "-repo", "memory")
	memory := filepath.Join(memDir, "MEMORY.md")
	src := newFakeSource()
	w := newStepped(t, Options{Root: t.TempDir(), Debounce: 20 * time.Millisecond, Extra: []string{memory}}, src)
	t0 := time.Unix(1_700_000_000, 0)
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	src.onAdd = func(dir string) {
		if dir == projects { // the rest of mkdir -p, and the write, as the watch starts
			if err := os.MkdirAll(memDir, 0o755); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(memory, []byte("# Memory\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	w.handle(fsnotify.Event{Name: filepath.Join(home, ".claude"), Op: fsnotify.Create}, t0)
	w.settle(t0.Add(100 * time.Millisecond))
	if !w.watched[memDir] || !w.ready[memory] {
		t.Fatalf("watched %v, ready %v: want %s watched and MEMORY.md read", w.watched, w.ready, memDir)
	}
}

// TestExtraDirRemovedAsItsWatchIsAdded: rm -r of ~/.claude while the
// watcher, told the memory folder went, adds a watch to the nearest
// ancestor it found: that one is gone too, so it goes on up to one that is
// there. Before, it stopped with no watch on the way (make test failed
// TestExtraDirRemadeOrLinked/remade under -race).
func TestExtraDirRemovedAsItsWatchIsAdded(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, ".claude")
	repo := filepath.Join(claude, "projects", "-repo")
	memory := filepath.Join(repo, "memory", "MEMORY.md")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	src := newFakeSource()
	w := newStepped(t, Options{Root: t.TempDir(), Debounce: 20 * time.Millisecond, Extra: []string{memory}}, src)
	src.onAdd = func(dir string) {
		if dir == repo { // the rest of rm -r, as the watch is added
			if err := os.RemoveAll(claude); err != nil {
				t.Error(err)
			}
		}
	}
	w.watchExtras(time.Unix(1_700_000_000, 0))
	if !w.watched[home] {
		t.Fatalf("watched %v: want %s, the nearest folder still there", w.watched, home)
	}
}

// TestExtraDirRemadeOrLinked: an Extra file's folder removed and made again
// after the start is waited for from an ancestor again (not only at the
// next rescan); and a ~/.claude that is a symbolic link (dotfiles) is
// watched through it, as the file is found through it.
func TestExtraDirRemadeOrLinked(t *testing.T) {
	run := func(t *testing.T, home string, setup func(*Watcher)) {
		memDir := filepath.Join(home, ".claude", "projects", "-repo", "memory")
		memory := filepath.Join(memDir, "MEMORY.md")
		w, c := startReal(t, Options{Root: t.TempDir(), Debounce: 20 * time.Millisecond, Rescan: time.Hour, Extra: []string{memory}})
		poll(t, "the first rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 })
		setup(w)
		_, n := c.since(0)
		if err := os.MkdirAll(memDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(memory, []byte("# Memory\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		waitBatch(t, c, n, "MEMORY.md", hasPath(memory))
	}
	t.Run("remade", func(t *testing.T) {
		home := t.TempDir()
		claude := filepath.Join(home, ".claude")
		if err := os.MkdirAll(filepath.Join(claude, "projects", "-repo", "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, home, func(w *Watcher) {
			if err := os.RemoveAll(claude); err != nil {
				t.Fatal(err)
			}
			poll(t, "the home folder watched instead", func() bool {
				var ok bool
				onLoop(t, w, func() { ok = w.watched[home] })
				return ok
			})
		})
	})
	t.Run("linked", func(t *testing.T) {
		home, dotfiles := t.TempDir(), t.TempDir()
		if err := os.Symlink(dotfiles, filepath.Join(home, ".claude")); err != nil {
			t.Fatal(err)
		}
		run(t, home, func(*Watcher) {})
	})
}

// startReal runs a Watcher with opts on the real file system until the
// test ends, collecting its batches.
func startReal(t *testing.T, opts Options) (*Watcher, *collector) {
	t.Helper()
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := runCollect(t, w)
	return w, c
}

// TestRecheck: the paths a caller's rescan hands back are pending as an
// event's are, settled once quiet for the debounce, in the final batch when
// the watcher stops first; a path already pending or settled keeps its own
// debounce; a stopped watcher takes nothing.
func TestRecheck(t *testing.T) {
	const d = 50 * time.Millisecond
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	t.Run("debounced", func(t *testing.T) {
		root := t.TempDir()
		w := newStepped(t, Options{Root: root, Debounce: d}, newFakeSource())
		w.touch("a.json", root, at(0))
		w.touch("s.json", root, at(0))
		w.settle(at(50)) // a.json and s.json settled, not yet delivered
		w.touch("a.json", root, at(40+50))
		w.touchQuiet([]string{"a.json", "s.json", ".claude/b.json", "/home/u/MEMORY.md"}, at(100))
		if p := w.pending[".claude/b.json"]; p == nil || p.dir != filepath.Join(root, ".claude") {
			t.Fatalf("b.json pending %+v, want in %s", p, filepath.Join(root, ".claude"))
		}
		if p := w.pending["/home/u/MEMORY.md"]; p == nil || p.dir != "/home/u" {
			t.Fatalf("MEMORY.md pending %+v, want in /home/u", p)
		}
		if w.pending["s.json"] != nil {
			t.Fatal("a settled path was made pending again")
		}
		w.settle(at(140))
		if !w.ready["a.json"] || w.ready[".claude/b.json"] {
			t.Fatalf("at 140ms: a ready %v (want true: its own debounce), b ready %v (want false)", w.ready["a.json"], w.ready[".claude/b.json"])
		}
		w.postpone(filepath.Join(root, ".claude"), at(120)) // a temp file beside b.json
		w.settle(at(150))
		if w.ready[".claude/b.json"] {
			t.Fatal("b settled 30ms after an event beside it")
		}
		w.settle(at(170))
		if !w.ready[".claude/b.json"] || !w.ready["/home/u/MEMORY.md"] || w.busy[".claude/b.json"] {
			t.Fatalf("at 170ms: ready %v busy %v, want b.json and MEMORY.md, quiet", w.ready, w.busy)
		}
	})
	t.Run("flushed and refused when stopped", func(t *testing.T) {
		src := newFakeSource()
		w, err := newWithSource(Options{Root: t.TempDir(), Debounce: time.Hour, Rescan: -1}, src)
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() { errc <- w.Run(context.Background()) }()
		if !w.Recheck([]string{"a.json"}) {
			t.Fatal("a running watcher refused a recheck")
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("run: %v", err)
		}
		var got []string
		for b := range w.Batches() {
			got = append(got, b.Paths...)
		}
		if !slices.Equal(got, []string{"a.json"}) {
			t.Fatalf("flushed %q, want a.json", got)
		}
		if w.Recheck([]string{"b.json"}) {
			t.Fatal("a stopped watcher took a recheck")
		}
	})
}
