// Package watcher turns filesystem events under a repository work tree into
// settled changes of kept files: it watches the directories a caller selects,
// follows directories created and removed while it runs, debounces events per
// path so a half-written file is never reported, and tells the caller to
// rescan everything when events may have been lost. A directory the inotify
// watch limit keeps from being watched is polled instead (limit.go). It
// reports paths only; the caller reads, validates and records them. It is
// strata's only importer of fsnotify.
package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/strata-dev/strata/atomicfile"
)

// Defaults for Options.
const (
	DefaultDebounce = 50 * time.Millisecond
	DefaultRescan   = 60 * time.Second
)

// maxDelay bounds, in multiples of Options.Debounce, how long a path that
// keeps receiving events may stay pending: a file rewritten continuously is
// still reported at least this often.
const maxDelay = 10

// Options configures a Watcher.
type Options struct {
	// Root is the absolute path of the repository work-tree root.
	Root string
	// Debounce is how long no event may touch a path before it is settled.
	// Zero or less means DefaultDebounce.
	Debounce time.Duration
	// Rescan is the period of the rescan signal (Batch.Rescan). Zero means
	// DefaultRescan; less than zero turns the periodic rescan off.
	Rescan time.Duration
	// WatchDir reports whether the directory at rel (a slash path relative to
	// Root, "." for Root itself) is watched; the watcher descends only into
	// watched directories. Nil watches every directory except .git.
	WatchDir func(rel string) bool
	// Match reports whether the file at rel (a slash path relative to Root)
	// is a kept file. Only matching paths are emitted. Nil matches every file.
	// strata's own temp files (atomicfile.Prefix) never match.
	Match func(rel string) bool
	// Reread reports whether a metadata-only event (a chmod) on the kept
	// path key (as in Batch.Paths) makes it pending like a write: true for
	// a path the caller last failed to read, which a chmod may have made
	// readable. It is called on Run's goroutine. Nil drops such events: a
	// mode change is no change of content.
	Reread func(key string) bool
	// FollowLink reports whether the symbolic link at rel (a slash path
	// relative to Root that WatchDir accepts) is followed: the caller has
	// judged that it leads to a directory inside the work tree whose files
	// are kept under rel (a .claude that dotfiles link to a folder of the
	// repository). The watcher then watches the real directory and reports
	// its files under rel. A link whose real path is outside Root is never
	// followed. Nil follows no link. It is called on Run's goroutine.
	FollowLink func(rel string) bool
	// Extra lists absolute paths of files reported beside the kept ones:
	// kept files outside Root, or files in directories WatchDir passes
	// over that the caller wants to hear of (its configuration, git's
	// index). Their parent directories are watched (a parent that does
	// not exist is retried at each rescan) and they are emitted as the
	// absolute path, debounced as any path: a file replaced by a rename
	// (git's index.lock renamed over the index) is reported once quiet.
	Extra []string
	// Logger receives warnings about errors the watcher survives. Nil
	// discards them.
	Logger *slog.Logger
}

// Batch is a set of settled changes.
type Batch struct {
	// Paths are the kept paths that changed, were created, removed or renamed
	// (slash paths relative to Root, or absolute for Options.Extra),
	// deduplicated and sorted. The caller reads each to learn its new state;
	// a path that no longer exists was deleted.
	Paths []string
	// Busy are those of Paths reported while events for them still came:
	// a path rewritten continuously is reported maxDelay debounces after
	// its first event, so its versions get recorded, but what is read
	// then may be a writer's half-written file (attack19-watch 7). The
	// caller records such a version when it is valid and otherwise waits:
	// the writer's next event reports the path again, and a path left
	// invalid is found by the next rescan.
	Busy []string
	// Rescan says that events may have been missed and every kept path must
	// be rescanned: at start, after a kernel queue overflow, after a watch
	// could not be added, and periodically; and, once the tree around it has
	// been quiet for Options.Debounce, after a watched directory was renamed
	// or a symbolic link was created where a watched directory could be
	// (kept files recorded under that name are no longer where they were,
	// and only the caller knows them). A rescan's read may fall between a
	// writer's two syscalls; a caller that hands what it finds to Recheck
	// reads each such path again once it is quiet, as after an event.
	Rescan bool
}

// A Watcher reports settled changes of kept files on Batches. Create it with
// New, call Run once, and Close it.
type Watcher struct {
	root      string
	debounce  time.Duration
	rescan    time.Duration
	watchDir  func(string) bool
	match     func(string) bool
	reread    func(string) bool
	follow    func(string) bool
	realRoot  string          // Root with its symbolic links resolved
	extra     map[string]bool // absolute paths of Options.Extra
	extraDirs []string        // their parent directories
	log       *slog.Logger

	src source
	// out has capacity 1 and Run's goroutine is its only sender, so the final
	// flush can always be delivered without waiting for the consumer.
	out chan Batch

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returns

	mu      sync.Mutex // guards started: Run and Close may be called from different goroutines
	started bool

	shutdownOnce sync.Once
	shutdownErr  error

	// inspect runs a function on Run's goroutine; tests use it to look at the
	// state below without a data race.
	inspect chan func()
	// recheck carries Recheck's paths to Run's goroutine.
	recheck chan []string
	// addExtra carries AddExtra's paths to Run's goroutine.
	addExtra chan []string

	// The fields below are owned by the goroutine running Run; nothing else
	// touches them.
	watched map[string]bool // absolute directories watched, as the kept paths name them
	// via maps a watched directory reached through a followed link
	// (Options.FollowLink) to the real directory added to src, and names
	// maps each such real directory back to the watched names it serves:
	// its events are reported under those names.
	via         map[string]string
	names       map[string][]string
	pending     map[string]*pending // emitted path → not yet settled
	ready       map[string]bool     // settled paths not yet delivered
	busy        map[string]bool     // of ready, those reported while still being written (Batch.Busy)
	readyRescan bool
	readyBatch  *Batch // ready as a Batch, built lazily; nil when stale
	// asked is a rescan asked for by events, pending like a path: a
	// directory renamed away is often replaced a moment later (by a
	// symbolic link, by the directory renamed back), and a rescan made in
	// between would find its files absent and report them deleted.
	asked   *pending
	timer   *time.Timer
	armedAt time.Time // zero when timer is stopped

	// polled are the directories (as the kept paths name them) that could
	// not be watched because the inotify watch limit was reached: each is
	// looked at every pollEvery instead (poll), and at stop. warned is the
	// set last named in the limit's warning, so it is logged once per set.
	polled      map[string]*polledDir
	pollDirty   bool // polled changed since notePolled last looked
	warned      map[string]bool
	pollEvery   time.Duration
	pollTicker  *time.Ticker
	pollRunning bool
	// pollWork counts what the polls read, for tests of their cost:
	// directory entries listed and files (or directories) lstat'ed.
	pollWork struct{ listed, lstats int }
}

// polledDir is a directory polled in place of a watch.
type polledDir struct {
	real string // its real directory (below a followed link's target)
	// tree: a directory of the tree (its entries are judged as a watched
	// directory's events are); otherwise only the Options.Extra files in
	// it are looked at (a .git folder, the L2 file's folder)
	tree bool
	// seen maps the name of each entry a poll looks at (pollsEntry) to
	// what it was at the last look
	seen map[string]stamp

	// The fields below are a tree directory's. dev and ino are the
	// directory its poll began on: a watch stays on that directory, so a
	// poll that finds another one (or a link) under the name stops, as the
	// watch would have gone with the one replaced. self is the directory's
	// own stamp when it was last listed, at listed; wait counts the polls
	// left before a large directory may be listed again (pollStride).
	dev, ino uint64
	self     stamp
	listed   time.Time
	wait     int
}

// stamp is what a poll compares of a directory entry: any write, rename
// over or re-creation changes one of these.
type stamp struct {
	size         int64
	mtime, ctime int64
	ino          uint64
	mode         fs.FileMode
}

// MinPoll is the shortest period at which a directory that could not be
// watched (the inotify watch limit) is polled; the debounce, when longer,
// is the period.
const MinPoll = time.Second

// pending is a path that has seen events and is not yet settled.
type pending struct {
	dir   string    // absolute parent directory, to match sibling temp files
	first time.Time // first event since the path was last emitted
	last  time.Time // latest event
}

// due returns when p settles: debounce after its latest event, but no later
// than maxDelay debounces after its first.
func (p *pending) due(debounce time.Duration) time.Time {
	quiet := p.last.Add(debounce)
	bound := p.first.Add(maxDelay * debounce)
	if bound.Before(quiet) {
		return bound
	}
	return quiet
}

// New checks opts and creates a Watcher. It adds no watch before Run.
func New(opts Options) (*Watcher, error) {
	src, err := newSource()
	if err != nil {
		return nil, fmt.Errorf("watcher: %w", translateInit(err))
	}
	w, err := newWithSource(opts, src)
	if err != nil {
		src.Close()
		return nil, err
	}
	return w, nil
}

func newWithSource(opts Options, src source) (*Watcher, error) {
	if !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("watcher: root %q is not absolute", opts.Root)
	}
	root := filepath.Clean(opts.Root)
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("watcher: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("watcher: root %s is not a directory", root)
	}
	w := &Watcher{
		root:     root,
		debounce: opts.Debounce,
		rescan:   opts.Rescan,
		watchDir: opts.WatchDir,
		match:    opts.Match,
		reread:   opts.Reread,
		follow:   opts.FollowLink,
		extra:    make(map[string]bool),
		log:      opts.Logger,
		src:      src,
		out:      make(chan Batch, 1),
		done:     make(chan struct{}),
		inspect:  make(chan func()),
		recheck:  make(chan []string),
		addExtra: make(chan []string),
		watched:  make(map[string]bool),
		via:      make(map[string]string),
		names:    make(map[string][]string),
		pending:  make(map[string]*pending),
		ready:    make(map[string]bool),
		busy:     make(map[string]bool),
		polled:   make(map[string]*polledDir),
	}
	if w.realRoot, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("watcher: %w", err)
	}
	if w.follow == nil {
		w.follow = func(string) bool { return false }
	}
	if w.debounce <= 0 {
		w.debounce = DefaultDebounce
	}
	if w.rescan == 0 {
		w.rescan = DefaultRescan
	}
	w.pollEvery = max(MinPoll, w.debounce)
	if w.watchDir == nil {
		w.watchDir = func(rel string) bool { return rel != ".git" && !strings.HasPrefix(rel, ".git/") }
	}
	if w.match == nil {
		w.match = func(string) bool { return true }
	}
	// strata's own writes in flight are never kept files, whatever the rules.
	match := w.match
	w.match = func(rel string) bool { return !atomicfile.IsTemp(rel) && match(rel) }
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	for _, p := range opts.Extra {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("watcher: extra path %q is not absolute", p)
		}
		w.addExtraPath(p)
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w, nil
}

// addExtraPath makes the absolute path p one of Options.Extra.
func (w *Watcher) addExtraPath(p string) {
	p = filepath.Clean(p)
	w.extra[p] = true
	if d := filepath.Dir(p); !slices.Contains(w.extraDirs, d) {
		w.extraDirs = append(w.extraDirs, d)
	}
}

// AddExtra adds absolute paths to Options.Extra while Run runs: from when
// Run's goroutine takes them, their directories are watched and they are
// reported as the others are (a file that exists already is not reported
// for that). It reports false, adding nothing, when Run returns first or
// the Watcher is closed.
func (w *Watcher) AddExtra(paths []string) bool {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return false
		}
	}
	return w.hand(w.addExtra, paths)
}

// hand gives v to Run's goroutine on ch (Recheck, AddExtra), reporting
// false, giving nothing, when Run returns first or the Watcher is closed.
func (w *Watcher) hand(ch chan<- []string, v []string) bool {
	select {
	case ch <- v:
		return true
	case <-w.done:
		return false
	case <-w.ctx.Done():
		return false
	}
}

// Batches returns the channel of settled changes. The first Batch has Rescan
// set. The channel is closed when Run returns, after the final flush, so a
// consumer should range over it to the end.
func (w *Watcher) Batches() <-chan Batch { return w.out }

// Run adds the watches and reports changes until ctx is done or Close is
// called. Before returning it emits every path still pending, settled or not,
// as a final Batch, events already on their way included, and closes
// Batches. It returns nil when stopped by ctx or
// Close; it survives every filesystem error. Run may be called only once.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return errors.New("watcher: run called twice")
	}
	w.started = true
	w.mu.Unlock()
	defer close(w.done)
	defer w.shutdown()
	if w.ctx.Err() != nil { // closed before Run
		return nil
	}

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(w.ctx, stop)()

	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	defer w.timer.Stop()
	var tick <-chan time.Time
	if w.rescan > 0 {
		t := time.NewTicker(w.rescan)
		defer t.Stop()
		tick = t.C
	}

	w.pollTicker = time.NewTicker(time.Hour)
	w.pollTicker.Stop()
	defer w.pollTicker.Stop()

	w.resync()
	events, errs := w.src.Events(), w.src.Errors()
	for {
		if w.pollDirty {
			w.notePolled()
		}
		var out chan<- Batch
		var b Batch
		if w.hasReady() {
			out, b = w.out, w.batch()
		}
		var pollTick <-chan time.Time
		if w.pollRunning {
			pollTick = w.pollTicker.C
		}
		select {
		case <-ctx.Done():
			w.drain(events)
			w.poll(time.Now(), true) // what changed in them since the last look
			w.flush()
			return nil
		case ev, ok := <-events:
			if !ok {
				w.flush()
				return errors.New("watcher: event source closed")
			}
			w.handle(ev, time.Now())
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.handleError(err)
		case now := <-w.timer.C:
			w.settle(now)
		case <-tick:
			w.resync()
		case now := <-pollTick:
			w.poll(now, false)
		case out <- b:
			clear(w.ready)
			clear(w.busy)
			w.readyRescan = false
			w.readyBatch = nil
		case keys := <-w.recheck:
			w.touchQuiet(keys, time.Now())
		case paths := <-w.addExtra:
			for _, p := range paths {
				w.addExtraPath(p)
			}
			w.watchExtras(time.Now())
		case f := <-w.inspect:
			f()
		}
	}
}

// Recheck makes each of keys (kept paths named as Batch.Paths names them)
// pending as an event on it would: it is reported in a Batch once no event
// has touched it for the debounce, or in the final Batch. A key already
// pending or settled is left as it is: it is read after its own debounce.
// The caller's rescan gives it what it finds, so that a file the rescan
// catches between two writes (`rm f; printf … > f`, a truncation and the
// write after it) is read only once it is quiet, as an event would have it
// read. It waits for Run's goroutine to take keys, and reports false,
// taking nothing, when Run returns first (it is stopping) or the Watcher
// is closed.
func (w *Watcher) Recheck(keys []string) bool { return w.hand(w.recheck, keys) }

// touchQuiet makes each of keys pending as of now (Recheck), but for those
// pending or settled already.
func (w *Watcher) touchQuiet(keys []string, now time.Time) {
	for _, key := range keys {
		if w.pending[key] != nil || w.ready[key] {
			continue
		}
		name := key
		if !filepath.IsAbs(key) {
			name = filepath.Join(w.root, filepath.FromSlash(key))
		}
		w.touch(key, filepath.Dir(name), now)
	}
}

// Close stops Run, waits for it to return and releases the watches. It is
// safe to call more than once and without Run.
func (w *Watcher) Close() error {
	w.cancel()
	w.mu.Lock()
	started := w.started
	w.mu.Unlock()
	if started {
		<-w.done
	} else {
		w.shutdown()
	}
	return w.shutdownErr
}

func (w *Watcher) shutdown() {
	w.shutdownOnce.Do(func() {
		w.shutdownErr = w.src.Close()
		close(w.out)
	})
}

// handle applies one event. Events on directories keep the watch set in step
// with the tree; events on kept files make them pending; events on any other
// file (an editor's temp, swap or backup file) postpone the pending kept files
// beside it, because an editor is in the middle of saving one of them.
func (w *Watcher) handle(ev fsnotify.Event, now time.Time) {
	if ev.Op == 0 {
		return
	}
	for _, name := range w.namesOf(filepath.Clean(ev.Name)) {
		w.handleName(ev.Op, name, now)
	}
}

// namesOf returns the names an event on name is about: name itself, and,
// for the real directory of a followed link or a file in one, the same
// place under every name the link gives it. An event on a real directory
// watched only through a link is not about its own name.
func (w *Watcher) namesOf(name string) []string {
	dir := filepath.Dir(name)
	self, inDir := w.names[name], w.names[dir]
	if self == nil && inDir == nil {
		return []string{name}
	}
	var out []string
	if w.watched[dir] && w.via[dir] == "" || w.watched[name] && w.via[name] == "" {
		out = append(out, name)
	}
	for _, n := range self {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, d := range inDir {
		if n := filepath.Join(d, filepath.Base(name)); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// handleName applies one event on name.
func (w *Watcher) handleName(op fsnotify.Op, name string, now time.Time) {
	ev := fsnotify.Event{Name: name, Op: op}
	if ev.Op == fsnotify.Chmod {
		w.handleChmod(name, now)
		return
	}
	if w.extra[name] {
		w.touch(name, filepath.Dir(name), now)
		return
	}
	if ev.Has(fsnotify.Create) && w.leadsToExtra(name) {
		w.watchExtras(now) // a folder on the way to an extra file's appeared
		return
	}
	if w.watched[name] && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		w.unwatch(name, ev.Has(fsnotify.Rename), now)
		if w.leadsToExtra(name) {
			w.watchExtras(now) // wait, from an ancestor, for it to be made again
		}
		return
	}
	rel, inRoot := w.rel(name)
	if !inRoot {
		w.postpone(filepath.Dir(name), now)
		return
	}
	if ev.Has(fsnotify.Create) {
		// Lstat, not Stat: a symlink to a directory is descended only
		// when the caller follows it.
		fi, err := os.Lstat(name)
		switch {
		case err != nil:
		case fi.IsDir():
			if w.watchDir(rel) {
				w.addTree(name, w.realOf(name), rel, true, now)
			}
			return
		case fi.Mode()&fs.ModeSymlink != 0 && w.watchDir(rel) && !w.match(rel):
			// A link where a watched directory could be (a .claude/ that
			// dotfiles manage): files recorded under that name now lie
			// behind it, followed or not, and only the caller knows them.
			if real, ok := w.followed(name, rel); ok {
				w.addTree(name, real, rel, true, now)
			}
			w.askRescan(filepath.Dir(name), now)
			return
		}
	}
	if w.match(rel) {
		w.touch(rel, filepath.Dir(name), now)
		return
	}
	w.postpone(filepath.Dir(name), now)
}

// handleChmod applies a metadata-only event. The content did not change, so
// it is dropped, unless the caller wants the kept file read again (Reread):
// its last read failed, and a chmod may have made it readable.
func (w *Watcher) handleChmod(name string, now time.Time) {
	if w.reread == nil {
		return
	}
	key := name
	if !w.extra[name] {
		rel, inRoot := w.rel(name)
		if !inRoot || !w.match(rel) {
			return
		}
		key = rel
	}
	if w.reread(key) {
		w.touch(key, filepath.Dir(name), now)
	}
}

func (w *Watcher) handleError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn("watch: events lost, rescanning", "err", err)
		w.resync()
		return
	}
	w.log.Warn("watch", "err", err)
}

// rel returns name relative to Root as a slash path, and whether name is
// inside Root.
func (w *Watcher) rel(name string) (string, bool) {
	if name == w.root {
		return ".", true
	}
	prefix := w.root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(name, prefix) {
		return "", false
	}
	return filepath.ToSlash(name[len(prefix):]), true
}

// touch records an event on the kept path key, which lives in dir.
func (w *Watcher) touch(key, dir string, now time.Time) {
	p := w.pending[key]
	if p == nil {
		p = &pending{dir: dir, first: now}
		w.pending[key] = p
	}
	p.last = now
	w.arm(p.due(w.debounce), now)
}

// askRescan asks for a rescan once the tree is quiet: debounce after the
// latest event in dir (the parent of the directory renamed or replaced) or
// after the latest request, bounded like a path's.
func (w *Watcher) askRescan(dir string, now time.Time) {
	if w.asked == nil {
		w.asked = &pending{dir: dir, first: now}
	}
	w.asked.dir, w.asked.last = dir, now
	w.arm(w.asked.due(w.debounce), now)
}

// postpone restarts the debounce of the pending paths in dir, and of a
// pending rescan asked for by an event there.
func (w *Watcher) postpone(dir string, now time.Time) {
	for _, p := range w.pending {
		if p.dir == dir {
			p.last = now
		}
	}
	if w.asked != nil && w.asked.dir == dir {
		w.asked.last = now
	}
}

// arm makes the timer fire no later than at.
func (w *Watcher) arm(at, now time.Time) {
	if !w.armedAt.IsZero() && !at.Before(w.armedAt) {
		return
	}
	w.armedAt = at
	w.timer.Reset(at.Sub(now))
}

// settle moves the paths (and the rescan) due by now to ready and re-arms the
// timer for the next one.
func (w *Watcher) settle(now time.Time) {
	w.armedAt = time.Time{}
	var next time.Time
	for key, p := range w.pending {
		due := p.due(w.debounce)
		if !due.After(now) {
			w.ready[key] = true
			w.busy[key] = p.last.Add(w.debounce).After(now) // at the bound, not yet quiet
			w.readyBatch = nil
			delete(w.pending, key)
			if w.busy[key] {
				// reported again once quiet, whole: a writer that stopped
				// right after its last event sends no other
				w.pending[key] = &pending{dir: p.dir, first: now, last: p.last}
				due = w.pending[key].due(w.debounce)
				if next.IsZero() || due.Before(next) {
					next = due
				}
			}
			continue
		}
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	if w.asked != nil {
		if due := w.asked.due(w.debounce); !due.After(now) {
			w.asked = nil
			w.readyRescan = true
			w.readyBatch = nil
		} else if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	if !next.IsZero() {
		w.arm(next, now)
	}
}

// Bounds of drain: it stops at the first drainQuiet without an event, and
// after drainMax in any case, so a stop is never held up for long.
const (
	drainQuiet = 10 * time.Millisecond
	drainMax   = 250 * time.Millisecond
)

// drain takes in the events already on their way when the watcher stops, so
// that a write made just before SIGTERM is in the final flush.
func (w *Watcher) drain(events <-chan fsnotify.Event) {
	quiet := time.NewTimer(drainQuiet)
	defer quiet.Stop()
	deadline := time.NewTimer(drainMax)
	defer deadline.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			w.handle(ev, time.Now())
			quiet.Reset(drainQuiet)
		case <-quiet.C:
			return
		case <-deadline.C:
			return
		}
	}
}

// flush makes every pending path (and a pending rescan) ready and delivers
// what is ready as the final Batch. It never blocks: out has capacity 1 and
// this goroutine is its only sender, so once any undelivered Batch is taken
// back and merged, there is room.
func (w *Watcher) flush() {
	for key := range w.pending {
		w.ready[key] = true
		w.busy[key] = false // the last batch: recorded as it is
		w.readyBatch = nil
	}
	clear(w.pending)
	if w.asked != nil {
		w.asked = nil
		w.readyRescan = true
		w.readyBatch = nil
	}
	if !w.hasReady() {
		return
	}
	final := w.batch()
	select {
	case old := <-w.out:
		final = merge(old, final)
	default:
	}
	w.out <- final
}

func (w *Watcher) hasReady() bool { return len(w.ready) > 0 || w.readyRescan }

func (w *Watcher) batch() Batch {
	if w.readyBatch == nil {
		b := Batch{Rescan: w.readyRescan}
		for p := range w.ready {
			b.Paths = append(b.Paths, p)
			if w.busy[p] {
				b.Busy = append(b.Busy, p)
			}
		}
		slices.Sort(b.Paths)
		slices.Sort(b.Busy)
		w.readyBatch = &b
	}
	return *w.readyBatch
}

// merge joins two batches, b the later: a path b reports is busy as b
// says, another as a says.
func merge(a, b Batch) Batch {
	paths := slices.Concat(a.Paths, b.Paths)
	slices.Sort(paths)
	busy := slices.Clone(b.Busy)
	for _, p := range a.Busy {
		if !slices.Contains(b.Paths, p) {
			busy = append(busy, p)
		}
	}
	slices.Sort(busy)
	return Batch{Paths: slices.Compact(paths), Busy: slices.Compact(busy), Rescan: a.Rescan || b.Rescan}
}

// resync brings the watch set in line with the tree and asks for a rescan. It
// runs at start, periodically and after an overflow, when events may have been
// missed: directories that vanished or were replaced are dropped and every
// directory is added again (adding an existing watch is harmless), so a
// directory created or replaced unseen is watched from now on.
func (w *Watcher) resync() {
	now := time.Now()
	for dir := range w.watched {
		if real := w.via[dir]; real != "" {
			if r, err := w.resolve(dir); err != nil || r != real {
				w.unwatch(dir, false, now) // the link was moved or points elsewhere now
			}
		} else if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			w.unwatch(dir, false, now)
		}
	}
	for dir, pd := range w.polled {
		if pd.tree && !w.stillPolled(dir, pd) {
			w.unpoll(dir, now) // as a watch would have gone: addTree decides anew
		}
	}
	w.addTree(w.root, w.root, ".", false, now)
	w.watchExtras(now)
	w.readyRescan = true
	w.readyBatch = nil
}

// watchExtras watches the directory of each Options.Extra file. One that
// does not exist yet (Claude Code creates its project's memory folder on
// its first write) is waited for: its nearest existing ancestor is watched,
// and handle comes back here when a directory on the way is created. A
// directory watched only now is scanned for its extra file, which may have
// been written before the watch.
func (w *Watcher) watchExtras(now time.Time) {
	isDir := func(d string) bool { fi, err := os.Stat(d); return err == nil && fi.IsDir() }
	for _, dir := range w.extraDirs {
		was := w.watched[dir]
		// The nearest existing ancestor is watched; a folder below it made
		// before that watch (mkdir -p, then the write) sends it no event,
		// so each watch is followed by a look one level down, until the
		// folder itself exists or the next level does not yet.
		for depth := 0; depth < 64; depth++ {
			// followed: a ~/.claude that dotfiles link elsewhere is watched
			// through the link, as the kept file is found through it
			if isDir(dir) {
				ok, limit := w.add(dir)
				if limit {
					w.pollDir(dir, dir, false, now)
				}
				if ok && !was {
					for p := range w.extra {
						if filepath.Dir(p) == dir {
							if _, err := os.Lstat(p); err == nil {
								w.touch(p, dir, now)
							}
						}
					}
				}
				break
			}
			a, next := filepath.Dir(dir), dir
			for a != filepath.Dir(a) && !isDir(a) {
				a, next = filepath.Dir(a), a
			}
			if ok, limit := w.add(a); limit {
				// its extra files are looked for in place of the
				// watch that would have seen their folder made
				w.pollDir(dir, dir, false, now)
				break
			} else if !ok {
				if isDir(a) {
					break // a watch that failed for another reason: logged, a rescan asked for
				}
				continue // removed meanwhile (rm -r going up): from the next one up
			}
			if !isDir(next) {
				break // the next folder's creation is an event of a's watch
			}
		}
	}
}

// leadsToExtra reports whether dir is, or lies on the way to, the
// directory of an Options.Extra file.
func (w *Watcher) leadsToExtra(dir string) bool {
	for _, d := range w.extraDirs {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// addTree watches dir, whose real directory is real (dir itself unless
// it lies behind a followed link), then reads it and recurses into the
// subdirectories WatchDir accepts and the links FollowLink follows. The
// watch is added before the directory is read, so an entry created
// meanwhile is seen by the read, by an event, or both. With scan, every
// kept file found is made pending: the directory is new, and its files may
// have been written before its watch existed.
func (w *Watcher) addTree(dir, real, rel string, scan bool, now time.Time) {
	if old := w.via[dir]; w.watched[dir] && old != real {
		w.unwatch(dir, false, now) // a link now pointing elsewhere
	}
	if ok, limit := w.addAs(dir, real); limit {
		// not watched, polled: its entries are still read (its
		// subdirectories are watched or polled in their own right)
		w.pollDir(dir, real, true, now)
	} else if !ok {
		return
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		w.failed("read dir", dir, err)
		return
	}
	for _, e := range entries {
		abs, r := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
		if e.IsDir() { // a symlink is never a directory here
			if w.watchDir(r) {
				w.addTree(abs, filepath.Join(real, e.Name()), r, scan, now)
			}
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 && w.watchDir(r) && !w.match(r) {
			if lr, ok := w.followed(abs, r); ok {
				w.addTree(abs, lr, r, scan, now)
				continue
			}
		}
		if scan && w.match(r) {
			w.touch(r, dir, now)
		}
	}
}

// add watches dir and reports whether it is watched, and whether it is not
// for the inotify watch limit (the caller then polls it).
func (w *Watcher) add(dir string) (ok, limit bool) { return w.addAs(dir, dir) }

// addAs watches the directory named dir, whose real directory is real, and
// reports whether it is watched, and whether it is not for the inotify
// watch limit (ENOSPC from inotify_add_watch: fs.inotify.max_user_watches
// reached), which the caller answers by polling it (pollDir) rather than
// by a warning and a rescan.
func (w *Watcher) addAs(dir, real string) (ok, limit bool) {
	if err := w.src.Add(real); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			w.log.Debug("add watch", "dir", dir, "err", err)
			return false, true
		}
		w.failed("add watch", dir, err)
		return false, false
	}
	if w.polled[dir] != nil {
		delete(w.polled, dir) // watched again: the rescan of this resync covers the gap
		w.pollDirty = true
	}
	w.watched[dir] = true
	if real != dir {
		w.via[dir] = real
		if !slices.Contains(w.names[real], dir) {
			w.names[real] = append(w.names[real], dir)
		}
	}
	return true, false
}

// realOf returns the real directory of dir, a directory in a watched one:
// below the real directory of a followed link when its parent is one.
func (w *Watcher) realOf(dir string) string {
	if r := w.via[filepath.Dir(dir)]; r != "" {
		return filepath.Join(r, filepath.Base(dir))
	}
	return dir
}

// followed reports whether the symbolic link name (rel under Root) is
// followed, and the real directory it leads to, named under Root: the
// caller must follow it (FollowLink) and it must resolve to a directory
// inside Root.
func (w *Watcher) followed(name, rel string) (string, bool) {
	if !w.follow(rel) {
		return "", false
	}
	real, err := w.resolve(name)
	if err != nil {
		w.log.Debug("follow link", "path", rel, "err", err)
		return "", false
	}
	return real, true
}

// resolve returns the real directory name leads to, named under Root (as
// the directories watched in their own right are), or an error when it is
// not a directory inside Root.
func (w *Watcher) resolve(name string) (string, error) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(w.realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: leads out of the work tree", name)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s: leads to no directory", name)
	}
	return filepath.Join(w.root, rel), nil
}

// failed logs a watch or read failure. A directory that vanished is not a
// loss (its removal is an event of its own); any other failure (permission
// denied) means changes below dir go unseen, so a rescan is asked for. The
// inotify watch limit is no failure here: such a directory is polled.
func (w *Watcher) failed(what, dir string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		w.log.Debug(what, "dir", dir, "err", err)
		return
	}
	w.log.Warn(what, "dir", dir, "err", err)
	w.readyRescan = true
	w.readyBatch = nil
}

// unwatch forgets the watched directory dir and every watched directory below
// it. The kernel drops the watch of a removed directory by itself, but a
// renamed one keeps its watches under the old names, so they are removed. A
// removed directory was emptied first, each removal an event of its own; a
// renamed one took its files along unseen, so renamed asks for a rescan,
// once the tree is quiet (askRescan): what replaces it is part of the change.
func (w *Watcher) unwatch(dir string, renamed bool, now time.Time) {
	prefix := dir + string(filepath.Separator)
	linked := false
	for d := range w.watched {
		if d == dir || strings.HasPrefix(d, prefix) {
			real := d
			if r := w.via[d]; r != "" {
				// Files behind a link went with it unseen: ask for a rescan.
				real, linked = r, true
				delete(w.via, d)
				w.names[r] = slices.DeleteFunc(w.names[r], func(n string) bool { return n == d })
				if len(w.names[r]) == 0 {
					delete(w.names, r)
				}
			}
			delete(w.watched, d)
			if !w.watched[real] && len(w.names[real]) == 0 {
				_ = w.src.Remove(real) // fails when the kernel dropped it already
			}
		}
	}
	for d, pd := range w.polled {
		if pd.tree && (d == dir || strings.HasPrefix(d, prefix)) {
			w.unpoll(d, now) // polled in place of the watches it would have gone with
		}
	}
	if renamed || linked {
		w.askRescan(filepath.Dir(dir), now)
	}
}
