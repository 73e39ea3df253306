// Package daemon is the long-running side of strata, `strata watch`: it
// holds the single-watcher lock, turns the watcher's settled paths into
// recorded changes through the engine, reports invalid versions at once, and
// publishes its counters for `strata status`.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/watcher"
)

// Options configures a watch run.
type Options struct {
	Debounce time.Duration // per-path quiet time before a file is read
	Rescan   time.Duration // period of the full rescan
	Logger   *slog.Logger  // one line per recorded change
	Problems io.Writer     // invalid versions, one line per problem in the validate format
	// Ready, when set, is called once the catch-up scan has been recorded.
	Ready func()
	// ExpireEvery is how often the workflow state's TTL is checked (default
	// a minute; also once after the catch-up scan).
	ExpireEvery time.Duration
	// SyncRemote, when set, is synced with every SyncInterval and after
	// recorded changes settle (sync.go).
	SyncRemote   string
	SyncInterval time.Duration
}

// LockPath is the single-watcher lock of a work tree: in its own git dir,
// so each linked worktree has its own watcher.
func LockPath(eng *engine.Engine) string {
	return filepath.Join(eng.GitDir(), "strata", "watch.lock")
}

// Status is what `strata status` shows of a work tree's watcher.
type Status struct {
	Running bool      `json:"running"`
	PID     int       `json:"pid,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	Published
}

// Published is the status a running watcher writes into its lock file.
type Published struct {
	Recorded int `json:"recorded"`
	Rejected int `json:"rejected"`
	SyncStatus
}

// Info reads the watcher status of a work tree. A status the watcher wrote
// in a form this binary does not read is left out.
func Info(eng *engine.Engine) (Status, error) {
	info, held, err := pidlock.Read(LockPath(eng))
	if err != nil || !held {
		return Status{}, err
	}
	s := Status{Running: true, PID: info.PID, Since: info.Since}
	if len(info.Extra) > 0 {
		var p Published
		if json.Unmarshal(info.Extra, &p) == nil {
			s.Published = p
		}
	}
	return s, nil
}

// publisher keeps the watcher's status and writes it whole into the lock
// file on each change. The recorder and the sync goroutine both update it.
type publisher struct {
	lock *pidlock.Lock
	mu   sync.Mutex // guards p: two goroutines publish
	p    Published
}

func (pb *publisher) update(change func(*Published)) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	change(&pb.p)
	_ = pb.lock.Update(pb.p)
}

// Run watches until ctx is done. It takes the lock (a *pidlock.LockedError
// wrapping state.ErrLocked when another watcher holds it), records whatever
// differs from the ref (catch-up), then records each settled change. On
// return every pending change has been flushed and recorded.
func Run(ctx context.Context, eng *engine.Engine, o Options) error {
	lock, err := pidlock.Acquire(LockPath(eng), eng.Shared())
	if err != nil {
		var le *pidlock.LockedError
		if errors.As(err, &le) {
			return fmt.Errorf("another watcher is running on this work tree (pid %d, since %s): %w",
				le.Holder.PID, le.Holder.Since.Local().Format(time.RFC3339), state.ErrLocked)
		}
		return err // pidlock's errors say "lock: …" themselves
	}
	defer lock.Release()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pb := &publisher{lock: lock}
	// The place the watcher started in, kept across reloads: a reload
	// after the repository was removed and made again at the same path
	// (rm -rf; git init) must find it gone, not start over in the new one
	// beside that one's own watcher (attack22-verify V-9).
	place, err := here(eng, LockPath(eng))
	if err != nil {
		if gone := goneNow(eng); gone != nil {
			return gone
		}
		return err
	}
	loaded := "" // the stamp of .strata.yaml taken before eng read it ("": at the run's start)
	reload := false
	for {
		next, stamp, err := watch(ctx, eng, place, loaded, reload, o, log, pb)
		if next == nil {
			return err
		}
		loaded, reload = stamp, true
		// .strata.yaml or a schema file it names changed: watch again with
		// the configuration now on disk (the lock held throughout). The new
		// run's catch-up records, against it, whatever differs from the ref,
		// each file once quiet.
		eng, o.Ready = next, nil
		log.Info("reloaded", "config", config.FileName)
	}
}

// watch is one run of the watcher, in place, with eng's configuration, whose
// .strata.yaml had the stamp loaded before eng read it ("" when not known:
// taken now); reload is true for a run a reload started. It returns a new
// engine, opened on the configuration on disk, when that changed
// (configStamps), with the stamp .strata.yaml had before that engine read
// it; otherwise nil and Run's error.
func watch(ctx context.Context, eng *engine.Engine, place place, loaded string, reload bool, o Options, log *slog.Logger, pb *publisher) (*engine.Engine, string, error) {
	cfg := eng.Config()
	if gone := place.check(); gone != nil {
		return nil, "", gone // a reload racing rm -rf of the repository, or its making again
	}
	files := configFiles(cfg)
	stamps := configStamps(files)
	if loaded != "" {
		// an edit made after the engine read .strata.yaml, before now, is
		// a change still to load (attack19 verify N6: never loaded)
		stamps[0] = loaded
	}
	parent := ctx
	ctx, stopWatcher := context.WithCancel(ctx)
	defer stopWatcher()
	unread := &unreadPaths{}
	skipped := &privateSkips{}
	index := eng.IndexFile()
	// the files git writes when HEAD moves: a plain `git commit` writes
	// the index before the commit exists, so a batch the index's change
	// starts may still read the old HEAD, under which a file only a
	// .strata.yaml rule keeps is only staged (private); and a `git reset
	// --soft` writes no index at all. HEAD's reflog is one of them, but
	// core.logAllRefUpdates=false leaves it unwritten: the branch's own
	// file and ORIG_HEAD are written all the same (attack30 V3b). A
	// checkout of another branch adds that branch's file.
	heads, branch := eng.HeadFiles()
	// and the ignore files that make a recorded file private with no
	// event of its own (attack28-recheck N2): .git/info/exclude, the
	// top .gitignore
	ignores := []string{filepath.Join(eng.CommonDir(), "info", "exclude"), cfg.Abs(".gitignore")}
	w, err := watcher.New(watcher.Options{
		Root:     cfg.Root,
		Debounce: o.Debounce,
		Rescan:   o.Rescan,
		WatchDir: cfg.WatchDir,
		// A .claude linked to a folder of the work tree, whose files record
		// reads (config.Config.FollowDir).
		FollowLink: cfg.FollowDir,
		// Kept files, and those kept but for a control character in their
		// name, reported when their event arrives (reportBadName).
		// A file passed over as private for a reason git's index decides
		// is noted, to be judged again when the index changes.
		Match: func(rel string) bool {
			if _, ok := cfg.Classify(rel); ok || cfg.BadName(rel) || path.Base(rel) == ".gitignore" {
				return true // a .gitignore in a watched folder: judged as an index change
			}
			skipped.note(rel, cfg.Private(rel))
			return false
		},
		Reread: func(key string) bool {
			if filepath.IsAbs(key) {
				key = cfg.Rel(cfg.Root, key)
			}
			return unread.reread(key)
		},
		// The configuration files are watched too (configFiles), and git's
		// index: a `git add` and `git commit` keep a file only a
		// .strata.yaml rule keeps from then on (privateSkips).
		Extra:  append(append(append(append(cfg.Extra(), files...), index), heads...), ignores...),
		Logger: log,
	})
	if err != nil {
		return nil, "", err
	}
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	log.Info("watching", "root", cfg.Root, "ref", eng.StateRef(), "pid", os.Getpid())

	pb.mu.Lock()
	counts := pb.p
	pb.mu.Unlock()
	r := &recorder{eng: eng, log: log, problems: o.Problems, status: pb, mu: &sync.Mutex{}, unread: unread, place: place,
		skipped: skipped, index: index, heads: heads, ignores: ignores,
		recorded: counts.Recorded, rejected: counts.Rejected}
	r.agent = layers.New(eng, func(msg string) { log.Warn(msg) })
	r.replayOwed() // what a killed watcher owed comes before what changed since
	every := o.ExpireEvery
	if every <= 0 {
		every = time.Minute
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	look := time.NewTicker(goneEvery)
	defer look.Stop()
	if o.SyncRemote != "" {
		stop, err := startSync(ctx, eng, o, log, r)
		if err != nil {
			return nil, "", err
		}
		defer stop()
	}
	first := true
	batches := w.Batches()
	var retry <-chan time.Time
	backoff := retryMin
	var next *engine.Engine // the engine to reload with, once the configuration changed
	var nextStamp string    // .strata.yaml's stamp before next read it
	for batches != nil {
		select {
		case b, ok := <-batches:
			if !ok {
				batches = nil
				continue
			}
			if next != nil {
				continue // drained: the next run's catch-up reads them with the new configuration
			}
			if slices.Contains(b.Paths, heads[0]) && eng.HeadBranch() != branch {
				// another branch checked out: its file is watched too
				// from now on (HEAD moves with it); the files of the
				// branches checked out before stay watched
				var moved []string
				moved, branch = eng.HeadFiles()
				var added []string
				for _, f := range moved {
					if !slices.Contains(r.heads, f) {
						added = append(added, f)
					}
				}
				if len(added) > 0 && w.AddExtra(added) {
					r.heads = append(r.heads, added...)
					log.Info("HEAD names another branch: watching it", "branch", branch)
				}
			}
			if (b.Rescan || slices.ContainsFunc(b.Paths, func(p string) bool { return slices.Contains(files, p) })) &&
				!slices.Equal(configStamps(files), stamps) {
				stamps = configStamps(files)
				n, err := engine.Open(eng.Named())
				nextStamp = stamps[0]
				switch {
				case err == nil:
					n.Now = eng.Now
					next = n
					stopWatcher()
					retry = nil
					continue
				case r.stillHere():
					// An invalid .strata.yaml: the one loaded stays in force.
					// (Not said when the work tree or .git was removed: the
					// watcher stops with that one line below; attack40b.)
					log.Warn("config changed; not reloaded, the configuration loaded before stays in force", "err", err)
				}
			}
			// After the catch-up, what a rescan finds is read once quiet
			// (handleThen), as an event's path is; so is what the
			// catch-up of a run that a reload started finds (a reload
			// while agents write read their files mid-write: attack30b
			// F3). Only the catch-up at start records at once.
			recheck := w.Recheck
			if first && !reload {
				recheck = nil
			}
			if !r.handleThen(b, recheck) && retry == nil {
				retry = time.After(backoff)
			}
			if first {
				first = false
				r.expire()
				// The catch-up read every kept file; hand that garbage back to
				// the OS now rather than keep it resident while idle.
				debug.FreeOSMemory()
				if o.Ready != nil {
					o.Ready()
				}
			}
		case <-retry:
			// A record failed (I/O, a ref lock held past its timeout, objects
			// moved by an outside git gc): rescan soon instead of waiting for
			// the periodic rescan, backing off while it keeps failing.
			retry = nil
			if r.handle(watcher.Batch{Rescan: true}) {
				backoff = retryMin
			} else {
				backoff = min(2*backoff, retryMax)
				retry = time.After(backoff)
			}
		case <-r.heldC:
			r.heldC = nil
			if paths := r.heldPaths(); len(paths) > 0 {
				r.handle(watcher.Batch{Paths: paths})
			}
		case <-tick.C:
			r.expire()
		case <-look.C:
			if r.stillHere() {
				r.takePush()
			}
		}
		if r.gone != nil {
			stopWatcher() // the batches left are drained, never recorded
			retry = nil
		}
	}
	// from here on nothing is held (holdUnended): a line still being
	// appended is recorded as it is now, as every pending change is at a
	// stop, by these batches and the rescans below; not at a reload of
	// the configuration, whose watcher's catch-up holds it again
	// (attack42 F2: an edit of .strata.yaml recorded the half line)
	r.stopping = true
	if paths := r.heldPaths(); len(paths) > 0 && r.gone == nil && next == nil {
		r.handle(watcher.Batch{Paths: paths})
	}
	if retry != nil {
		r.handle(watcher.Batch{Rescan: true}) // last chance before exit
	}
	err = <-done
	if next != nil {
		if r.gone == nil && parent.Err() == nil {
			return next, nextStamp, nil
		}
		// Stopped while reloading: what the drained batches held is
		// recorded as a stop without reload would record it.
		r.handle(watcher.Batch{Rescan: true})
	}
	log.Info("stopped", "recorded", r.recorded, "rejected", r.rejected)
	if r.gone != nil {
		return nil, "", r.gone // printed by the caller as the one error line, exit 3
	}
	return nil, "", err
}

// configFiles are the absolute names of the files a configuration is read
// from: .strata.yaml and the user's own schema files its rules name.
func configFiles(cfg *config.Config) []string {
	out := []string{cfg.Abs(config.FileName)}
	for _, r := range cfg.UserRules() {
		if strings.HasSuffix(r.Schema, ".json") && !slices.Contains(out, cfg.Abs(r.Schema)) {
			out = append(out, cfg.Abs(r.Schema))
		}
	}
	return out
}

// configStamps says, for each file, what it is now (size, time, inode), so
// that a change of any is seen, events missed or not.
func configStamps(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		if fi, err := os.Stat(f); err == nil {
			var ino uint64
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				ino = st.Ino
			}
			out[i] = fmt.Sprintf("%d %d %d", fi.Size(), fi.ModTime().UnixNano(), ino)
		}
	}
	return out
}

// goneEvery is how often the watcher checks that its work tree and git
// directory are still there when nothing else made it look.
const goneEvery = time.Second

// place is the work tree and the git directory a watcher started in, and
// the lock file it holds there.
type place struct {
	root, gitDir, lock       string
	rootFI, gitDirFI, lockFI os.FileInfo
}

func here(eng *engine.Engine, lock string) (place, error) {
	p := place{root: eng.Root(), gitDir: eng.GitDir(), lock: lock}
	var err error
	if p.lockFI, err = os.Stat(lock); err != nil {
		return p, fmt.Errorf("lock: %w", err)
	}
	if p.rootFI, err = os.Stat(p.root); err != nil {
		return p, fmt.Errorf("work tree: %w", err)
	}
	if p.gitDirFI, err = os.Stat(p.gitDir); err != nil {
		return p, fmt.Errorf("git directory: %w", err)
	}
	return p, nil
}

// treeGone and gitDirGone are the errors of a watcher that stops because
// its work tree or its git directory went (Run's one error line, exit 3).
func treeGone(root string) error {
	return fmt.Errorf("%s: work tree removed or replaced; watcher stopped: %w", root, state.ErrNotRepo)
}

func gitDirGone(dir string) error {
	return fmt.Errorf("%s: git directory removed or replaced; watcher stopped: %w", dir, state.ErrNotRepo)
}

// goneNow is place.check for a watcher that could not take its place
// (here) when it reloaded: the work tree is missing, or the git directory,
// its HEAD or the lock file the watcher holds (rm -rf reaches .git/strata
// before HEAD, and the work tree last).
func goneNow(eng *engine.Engine) error {
	if _, err := os.Stat(eng.Root()); err != nil {
		return treeGone(eng.Root())
	}
	if headMissing(eng.GitDir()) != nil {
		return gitDirGone(eng.GitDir())
	}
	if _, err := os.Lstat(LockPath(eng)); err != nil {
		return gitDirGone(eng.GitDir())
	}
	return nil
}

// headWait bounds how long headMissing waits for a HEAD being written.
const headWait = 2 * time.Second

// headMissing returns the error of an Lstat of the git directory's HEAD,
// nil when it is there. A HEAD missing while HEAD.lock is there is one git
// is writing: with core.preferSymlinkRefs it removes HEAD and then makes
// the link in its place (refs/files-backend.c, create_ref_symlink), under
// HEAD.lock, so a look in between (a checkout of another branch) finds no
// HEAD; it is looked for again until the lock goes, for headWait at most
// (a lock left by a git that died there). The watcher took that moment
// for its git directory removed and stopped.
func headMissing(gitDir string) error {
	head := filepath.Join(gitDir, "HEAD")
	deadline := time.Now().Add(headWait)
	for {
		_, err := os.Lstat(head)
		if err == nil {
			return nil
		}
		if _, lerr := os.Lstat(head + ".lock"); lerr != nil || !time.Now().Before(deadline) {
			// git makes HEAD before it removes the lock: a HEAD made
			// between the two looks is there now
			_, err = os.Lstat(head)
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// check returns an error wrapping state.ErrNotRepo when the work tree or
// the git directory the watcher started in is gone: removed, replaced by
// another (rm -rf .git; git init), left without HEAD (git would not take it
// for a repository; headMissing), or being removed: the lock file the
// watcher holds is gone (rm -rf reaches .git/strata before HEAD).
func (p place) check() error {
	if fi, err := os.Stat(p.root); err != nil || !os.SameFile(fi, p.rootFI) {
		return treeGone(p.root)
	}
	fi, err := os.Stat(p.gitDir)
	if err == nil && os.SameFile(fi, p.gitDirFI) {
		err = headMissing(p.gitDir)
	}
	if err == nil {
		var lfi os.FileInfo
		if lfi, err = os.Lstat(p.lock); err == nil && !os.SameFile(lfi, p.lockFI) {
			err = errors.New("lock file replaced")
		}
	}
	if err != nil || !os.SameFile(fi, p.gitDirFI) {
		return gitDirGone(p.gitDir)
	}
	return nil
}

// The retry delays after a failed record.
const (
	retryMin = 200 * time.Millisecond
	retryMax = 10 * time.Second
)

// unreadPaths are the kept paths whose last read failed (engine.Outcome.Unread):
// a chmod may make them readable, so the watcher reads them again on one
// (watcher.Options.Reread). Other chmods, an editor's on every save, are
// dropped: they change no content.
type unreadPaths struct {
	// mu guards the fields below: the watcher's goroutine asks while Run's
	// records.
	mu    sync.Mutex
	paths map[string]bool
	// busy is set while a record reads files: a chmod seen then may come
	// after a read that failed and before that failure is noted here, so
	// it is read again too (once; reading makes no event).
	busy bool
}

func (u *unreadPaths) reread(path string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.busy || u.paths[path]
}

func (u *unreadPaths) setBusy() {
	u.mu.Lock()
	u.busy = true
	u.mu.Unlock()
}

// done notes which of the paths just read could not be read, and ends busy.
func (u *unreadPaths) done(outs []engine.Outcome) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, o := range outs {
		switch {
		case o.Unread():
			if u.paths == nil {
				u.paths = map[string]bool{}
			}
			u.paths[o.Path] = true
		default:
			delete(u.paths, o.Path)
		}
	}
	u.busy = false
}

// privateSkips are the files the watcher passed over as private for a
// reason git's index decides (config.IndexDecides): git does not track
// them (or has them only staged) and only a .strata.yaml rule keeps them,
// git ignores them, or git is told to ignore their local changes. A `git
// commit` keeps such a file with no change to the file itself, so no event
// of the file's would ever have it recorded: when the index changes, these
// files, and only these (a `git status` may rewrite the index too), are
// judged again (recorder.rejudge). Each rescan lists them afresh.
type privateSkips struct {
	// mu guards paths and fresh: the watcher's goroutine notes (Match)
	// while Run's judges.
	mu    sync.Mutex
	paths map[string]bool
	// fresh holds the files noted since the last batch took them (takeFresh),
	// with the reason: a kept file turned private is one whose recorded
	// versions no sync refused yet (engine.NotePrivate)
	fresh map[string]string
}

// note adds rel when why, the reason it is private, is one the index
// decides.
func (s *privateSkips) note(rel, why string) {
	if !config.IndexDecides(why) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths == nil {
		s.paths, s.fresh = map[string]bool{}, map[string]string{}
	}
	s.paths[rel], s.fresh[rel] = true, why
}

// takeFresh returns the files noted since it last ran, with their reasons,
// and forgets them.
func (s *privateSkips) takeFresh() []engine.Private {
	if s == nil {
		return nil // a recorder made without one (tests)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engine.Private, 0, len(s.fresh))
	for p, why := range s.fresh {
		out = append(out, engine.Private{Path: p, Reason: why})
	}
	s.fresh = map[string]string{}
	return out
}

// reset replaces the set with the private files a rescan found.
func (s *privateSkips) reset(found []engine.Private) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paths, s.fresh = map[string]bool{}, map[string]string{}
	for _, p := range found {
		if config.IndexDecides(p.Reason) {
			s.paths[p.Path] = true
		}
	}
}

// list returns the set, sorted.
func (s *privateSkips) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.paths))
	for p := range s.paths {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// drop removes rel: it is kept now, or private for a reason the index
// does not decide.
func (s *privateSkips) drop(rel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.paths, rel)
}

// rejudge judges the files passed over as private (privateSkips) again,
// against the index and HEAD as they are now (the engine forgot the ones
// it read), and returns those kept now — a file only a .strata.yaml rule
// keeps once a commit holds it (config.WhyStagedOnly: a password staged
// for 0.3 s was recorded, attack27-recheck N1) — but for those in
// settled, which the batch reads anyway. They are read as an event's paths are: handed to recheck, to be
// read once quiet, or returned to be recorded now when recheck is nil or
// takes nothing. A file private still is noted still, unless the reason is
// one the index no longer decides.
func (r *recorder) rejudge(settled []string, recheck func([]string) bool) []config.Kept {
	cfg := r.eng.Config()
	var kept []config.Kept
	var keys []string
	for _, rel := range r.skipped.list() {
		k, ok := cfg.Classify(rel)
		switch {
		case ok:
			r.skipped.drop(rel)
			if !slices.Contains(settled, rel) {
				kept, keys = append(kept, k), append(keys, rel)
			}
		case !config.IndexDecides(cfg.Private(rel)):
			r.skipped.drop(rel)
		}
	}
	if len(keys) == 0 || recheck != nil && recheck(keys) {
		return nil
	}
	return kept
}

// warnNote logs err, a failure to note the recorded versions of files
// found private that no sync refused yet (engine.NotePrivate, NoteScanned)
// or to find them (TurnedPrivate), and goes on: the sync that would
// publish them refuses them anyway while they are private.
func (r *recorder) warnNote(err error) {
	if err != nil {
		r.log.Warn("note private versions", "err", err)
	}
	// a note that could not be written (a folder stands at its name) is
	// said, as record prints it and a sync reports it
	for _, p := range r.eng.TakeUnwrittenNotes() {
		r.log.Warn("note private versions", "err", p.Error())
	}
}

// recorder applies batches; only Run's goroutine uses it.
type recorder struct {
	eng *engine.Engine
	// pushLooked is the state ref's head the last look for a push into
	// this repository took (takePush), once pushLookedSet
	pushLooked    string
	pushLookedSet bool
	log           *slog.Logger
	problems      io.Writer
	status        *publisher
	// mu is held while recording and while a sync moves the ref and writes
	// kept files (never during its network I/O), so neither reads a file
	// the other is between recording and writing.
	mu       *sync.Mutex
	kick     chan struct{} // nil without --sync; a recorded change asks for a sync
	recorded int
	rejected int
	agent    *layers.Agent   // the write protocol after recorded L1 changes
	unread   *unreadPaths    // read again on a chmod
	skipped  *privateSkips   // judged again when the index changes
	index    string          // git's index file, as the watcher names it
	heads    []string        // the files a move of HEAD writes (judged as an index change)
	ignores  []string        // ignore files whose change is judged as an index change
	badSeen  map[string]bool // bad file names already reported
	// place is where the watcher started; gone, once set, says it is gone
	// and nothing is recorded any more (stillHere).
	place place
	gone  error
	// held are the paths holdUnended left for later, with when it first
	// did; heldC brings them back; stopping records them as they are
	held     map[string]time.Time
	heldC    <-chan time.Time
	heldDue  time.Time // when heldC fires
	stopping bool
}

// holdFor is how long the watcher waits for a MEMORY.md or graph line
// still being appended (holdUnended) before it records the file as it is.
var holdFor = 2 * time.Second

// heldPaths names the files holdUnended holds, as the watcher names
// them (absolute), sorted.
func (r *recorder) heldPaths() []string {
	var paths []string
	for p := range r.held {
		paths = append(paths, r.eng.Config().Abs(p))
	}
	slices.Sort(paths)
	return paths
}

// holdUnended reports whether k's file is left for later because it looks
// like a line still being appended (engine.AppendInProgress: the recorded
// version with bytes added at the end, the last no line end): a writer
// that appends a line in two writes, pausing between them longer than the
// debounce, had the half line recorded, synced to the other machine, and
// that machine's own append joined it, both lines gone as lines (attack41
// F1). It is read again once held for holdFor (a timer in Run), and then
// recorded as it is: a file saved without a final newline is legitimate.
func (r *recorder) holdUnended(k config.Kept) bool {
	if r.stopping || !engine.MergedByContent(k) {
		return false
	}
	f, prob := r.eng.Read(k)
	if prob != nil {
		delete(r.held, k.Path)
		return false
	}
	// a merge with a push's (or sync's) version, owed and waiting for the
	// line, is waited for as long: recorded before, the edit was recorded
	// without it, and then merged
	owed := r.eng.UnendedMergeWait(f)
	if owed <= 0 && !r.eng.AppendInProgress(f) {
		delete(r.held, k.Path)
		return false
	}
	now := time.Now()
	since, ok := r.held[k.Path]
	if !ok {
		if r.held == nil {
			r.held = map[string]time.Time{}
		}
		r.held[k.Path], since = now, now
	}
	left := holdFor - now.Sub(since)
	if owed > 0 {
		left = owed // the merge's own wait, not the watcher's
	}
	if left <= 0 {
		delete(r.held, k.Path)
		return false
	}
	r.log.Debug("a line still being appended: held", "path", k.Path, "for", left)
	if due := now.Add(left); r.heldC == nil || due.Before(r.heldDue) {
		r.heldC, r.heldDue = time.After(left), due
	}
	return true
}

// stillHere reports whether the work tree and the git directory are still
// those the watcher started in, and sets gone when they are not: a record
// then would write into a directory deleted under it (rm -rf of the work
// tree, of .git) or into another repository made there since.
func (r *recorder) stillHere() bool {
	if r.gone == nil {
		r.gone = r.place.check()
	}
	return r.gone == nil
}

// takePush takes a push into this repository (it is another machine's
// sync remote) when one moved the state ref since strata last did, without
// waiting for an edit here (attack39b F4: the watcher took none until a
// kept file changed, and a refused push stayed on the ref meanwhile,
// failing every other clone's sync). A look costs a read of the ref and of
// worktree-head, once a second.
func (r *recorder) takePush() {
	head, maybe := r.eng.PushMaybe()
	if !maybe || r.pushLookedSet && head == r.pushLooked {
		return // nothing moved, or this head was looked at already (a folder at worktree-head, which stays)
	}
	r.pushLooked, r.pushLookedSet = head, true // a deleted ref's "" too (attack39c N3)
	r.mu.Lock()
	err := r.eng.TakePush()
	r.mu.Unlock()
	if err != nil {
		r.log.Warn("a push into this repository not taken yet", "err", err)
	}
	r.logNotWritten()
	// a file the push could not write, edited here, owes a merge of the
	// edit with the pushed version (engine.OweMerges): made now, by its
	// record, not at the file's next edit (the agent may be done)
	if paths, invalid, _, err := r.eng.PendingMerges(); err == nil {
		var owed []string
		for _, p := range paths {
			if !invalid[p] {
				owed = append(owed, r.eng.Config().Abs(p))
			}
		}
		if len(owed) > 0 {
			r.handle(watcher.Batch{Paths: owed})
		}
	}
}

// reportBadNames prints, once per name, the files a control character in
// their name keeps from being recorded.
func (r *recorder) reportBadNames() {
	bad, err := r.eng.BadNames()
	if err != nil || r.problems == nil {
		return
	}
	for _, p := range bad {
		r.badName(p)
	}
}

// reportBadName prints the file rel, which a control character in its name
// keeps from being recorded, in the line strata validate prints, unless it
// was reported already or no longer exists.
func (r *recorder) reportBadName(rel string) {
	if r.problems == nil || r.badSeen[rel] {
		return
	}
	if _, err := os.Lstat(r.eng.Config().Abs(rel)); err != nil {
		return
	}
	r.badName(engine.BadName(rel))
}

func (r *recorder) badName(p state.Problem) {
	if r.badSeen == nil {
		r.badSeen = map[string]bool{}
	}
	if !r.badSeen[p.Path] {
		r.badSeen[p.Path] = true
		fmt.Fprintln(r.problems, p.Error())
	}
}

// logMore logs and counts the records of the write protocol and the TTL
// check (more), after a batch recorded outs: each recorded version with its
// source; the problems of an invalid one outs does not already report
// (the L2 file, found invalid by the write protocol: its warning names it).
func (r *recorder) logMore(more, outs []engine.Outcome) {
	for _, o := range more {
		switch {
		case o.Entry != nil:
			r.recorded++
			logRecorded(r.log, o)
		case o.Invalid() && !slices.ContainsFunc(outs, func(x engine.Outcome) bool { return x.Path == o.Path }):
			if o.Rejected != nil {
				r.rejected++
			}
			if r.problems != nil {
				fmt.Fprintln(r.problems, o.Problems.Error())
			}
		}
	}
}

// logRecorded logs a record the write protocol (or the TTL check) made,
// with its source.
func logRecorded(log *slog.Logger, o engine.Outcome) {
	log.Info("recorded", "path", o.Path, "action", o.Entry.Action, "source", o.Entry.Source, "commit", state.ShortID(o.Entry.Commit))
}

// owedPath is the marker of the write protocol's runs under way
// (docs/format.md): it holds the state ref's head before the first record
// whose protocol has not yet run, and is there from before that record
// until its protocol has run. One left behind is a watcher's killed
// between the two; the next watcher replays what it owed (replayOwed).
func owedPath(eng *engine.Engine) string {
	return filepath.Join(eng.GitDir(), "strata", "protocol-owed")
}

// owe notes, before a record that runs the protocol, that its protocol is
// owed: the head the record starts from, unless an earlier run still owes
// one (its base is the older, and covers this run too).
func (r *recorder) owe() {
	name := owedPath(r.eng)
	if _, err := os.Lstat(name); err == nil {
		return
	}
	head, err := r.eng.Head()
	if err != nil {
		return // (nothing recorded can be told from a head we cannot read)
	}
	if head == "" {
		head = noHead // never an empty file: a write cut short leaves one
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err == nil {
		// as strata's other files in the git directory: 0666 less the
		// umask, then core.sharedRepository's mode (attack36d L4: 0644
		// whatever either said)
		_ = atomicfile.WriteUnsynced(name, []byte(head+"\n"), r.eng.Shared().FixFile)
	}
}

// noHead is the note's base before the first record.
const noHead = "none"

// commitID reports whether s is a full commit id (SHA-1 or SHA-256, hex).
func commitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// paid removes the marker once the protocol ran for every record since it
// was written.
func (r *recorder) paid() { _ = os.Remove(owedPath(r.eng)) }

// replayOwed runs, before the catch-up, the protocol a killed watcher owed
// (owedPath): its L2 lines, oldest first, before the lines of what changed
// since, and the L3 upsert. The marker goes once that ran.
func (r *recorder) replayOwed() {
	// read as a file that may be anything: never blocking on a named pipe,
	// never following a link, never more than a line
	data, err := state.ReadRegular(owedPath(r.eng), 128, false)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	base := strings.TrimSpace(string(data))
	if err != nil || base != noHead && !commitID(base) {
		r.log.Warn("a note of the write protocol's runs under way cannot be read; removed, nothing replayed", "path", owedPath(r.eng))
		_ = os.RemoveAll(owedPath(r.eng))
		return
	}
	if base == noHead {
		base = ""
	}
	r.mu.Lock()
	outs, err := r.agent.Replay(base, state.SourceWatch)
	r.mu.Unlock()
	r.logMore(outs, nil)
	switch {
	case errors.Is(err, layers.ErrReplayBase):
		// the ref was rewritten since (a forget), or the note is not one a
		// run could have left: the owed lines cannot be told
		r.log.Warn("the write protocol a killed watcher owed is not replayed: its note names "+state.ShortID(base)+", "+err.Error()+"; removed", "path", owedPath(r.eng))
	case err != nil:
		r.log.Error("layers", "err", err)
		return // tried again at the next start
	}
	// (an L3 that could not be written is not waited for: most have none,
	// and the next L1 record upserts all of L1)
	r.paid()
}

// beforeExpire, set by tests only, runs between the batch expire records
// and the TTL check, as an agent's save landing there would.
var beforeExpire func()

// expire runs the TTL check of the workflow state.
func (r *recorder) expire() {
	if !r.stillHere() {
		return
	}
	// Record the workflow state the way a batch does first (logged, an
	// invalid version reported, with the write protocol): Expire records it
	// too, to date its TTL, and runs the protocol for what it records, but
	// reports nothing of an invalid version.
	r.handle(watcher.Batch{Paths: []string{layers.WorkflowStatePath}})
	if beforeExpire != nil {
		beforeExpire()
	}
	r.owe() // Expire may record the workflow state, then run the protocol
	r.mu.Lock()
	x, outs, err := r.agent.Expire(state.SourceWatch)
	r.mu.Unlock()
	if err == nil {
		r.paid()
	}
	// A version saved after that batch read the file is recorded by Expire,
	// with the write protocol's own records: logged and counted as a
	// batch's. (An invalid one is reported by the watcher's event for it,
	// as the batch above reported one already there.)
	r.logMore(slices.DeleteFunc(outs, func(o engine.Outcome) bool { return o.Entry == nil }), nil)
	r.status.update(func(p *Published) { p.Recorded, p.Rejected = r.recorded, r.rejected })
	if err != nil {
		r.log.Error("expire", "err", err)
		return
	}
	if x != nil {
		r.log.Info("expired", "line", x.Line)
	}
}

// later hands to recheck those of the kept paths a rescan listed that differ
// from what is recorded (engine.Engine.Differing), but for those the
// watcher settled in the same batch (settled), and returns what is to be
// recorded now: those settled, and those that differ when recheck took
// nothing. A path found as recorded is left alone: handed over too, it
// would be read once more at a moment no event chose, which could again
// fall between two writes.
func (r *recorder) later(kept []config.Kept, settled []string, recheck func([]string) bool) ([]config.Kept, error) {
	var now, rest []config.Kept
	for _, k := range kept {
		if slices.Contains(settled, r.key(k)) {
			now = append(now, k)
		} else {
			rest = append(rest, k)
		}
	}
	r.mu.Lock() // it completes a sync journal, writing kept files
	found, err := r.eng.Differing(rest)
	r.mu.Unlock()
	r.logNotWritten()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(found))
	for i, k := range found {
		keys[i] = r.key(k)
	}
	if len(keys) > 0 && !recheck(keys) {
		now = append(now, found...)
	}
	return now, nil
}

// key is k's path as the watcher names it: relative, or absolute outside
// the work tree.
func (r *recorder) key(k config.Kept) string {
	if engine.OutsideTree(k.Path) {
		return r.eng.Config().Abs(k.Path)
	}
	return k.Path
}

// logNotWritten logs the notes of the sync journal the engine's last
// record (or Differing) completed: see printNotWritten in cmd/strata.
func (r *recorder) logNotWritten() {
	// the files a push wrote in one line (a sync's push of 300 files
	// logged 300), each refusal in its own, with its reason
	var taken []engine.Pushed
	for _, p := range r.eng.TakePushed() {
		if p.Refused != "" || p.PutBack {
			r.log.Warn(p.Message())
		} else {
			taken = append(taken, p)
		}
	}
	if len(taken) == 1 {
		r.log.Info(taken[0].Message())
	} else if len(taken) > 1 {
		var wrote, deleted []string
		for _, p := range taken {
			if p.Deleted {
				deleted = append(deleted, state.ShownPath(p.Path))
			} else {
				wrote = append(wrote, state.ShownPath(p.Path))
			}
		}
		var attrs []any
		if len(wrote) > 0 {
			attrs = append(attrs, "wrote", strings.Join(wrote, " "))
		}
		if len(deleted) > 0 {
			attrs = append(attrs, "deleted", strings.Join(deleted, " "))
		}
		r.log.Info("took a push into this repository (another machine's sync, or git update-ref): its versions are written here", attrs...)
	}
	for _, n := range r.eng.TakeNotWritten() {
		if n.Found != "" && n.Rev == "" {
			r.log.Warn("found a version a strata process killed while writing it left in a temp file; recorded, then the file on disk", "path", n.Path, "commit", state.ShortID(n.Found), "rejected", n.FoundRejected)
			continue
		}
		if n.Found != "" {
			r.log.Warn("found an edit saved as "+n.Interrupted()+" wrote the file, left in a temp file; recorded, then the file on disk", "path", n.Path, "commit", state.ShortID(n.Found), "rejected", n.FoundRejected)
			continue
		}
		if n.Merged != "" {
			attrs := []any{"path", n.Path, "commit", state.ShortID(n.Merged)}
			if len(n.Dropped) > 0 {
				attrs = append(attrs, "dropped", strings.Join(n.Dropped, "; "))
			}
			r.log.Info("merged again: the edit a sync could not write over is recorded, then merged with "+n.Owed(), attrs...)
			continue
		}
		if n.NotTaken {
			r.log.Warn("not taken: "+n.Interrupted()+"'s version could not be written here; status shows it as not taken, and strata restore PATH writes it once it can be written", "path", n.Path)
			continue
		}
		if n.Unended {
			r.log.Info("not written yet: edited on disk after "+n.Interrupted()+", a line still being appended; once it ends (or in "+engine.UnendedWait.String()+"), merged again with "+n.Owed(), "path", n.Path)
			continue
		}
		if n.Later {
			r.log.Warn("not written: edited on disk after "+n.Interrupted()+", and invalid; once fixed, its next record merges it again with "+n.Owed(), "path", n.Path)
			continue
		}
		if n.Restore {
			r.log.Warn("left as edited after an interrupted restore: the edit is recorded as any edit, over the restored version", "path", n.Path, "restore", state.ShortID(n.Rev))
			continue
		}
		r.log.Warn("not written: edited on disk after "+n.Interrupted()+"; the edit is recorded over "+n.Owed(), "path", n.Path, "merge", state.ShortID(n.Rev))
	}
}

// rescanListed and rescanDone, set by tests only (both or neither), run
// in a rescan between its listing of the kept paths and what it does with
// them, and once it is done: a file deleted and made again around a
// rescan, deterministically.
var rescanListed, rescanDone func()

// halfWritten reports whether the file at k, reported while its writer was
// still at it (watcher.Batch.Busy), is not a version to record or report
// now: it would be refused (a half-written JSON, a cut line). Its writer's
// next event reports it again; one left that way is found by the next
// rescan. A valid version is recorded at once, so a file rewritten
// continuously still gets its versions recorded. A file missing is no
// version either: a writer that deletes and makes it again (`rm f; printf
// … > f`, over and over, faster than the debounce) is caught between the
// two; a deletion that stays is reported again once quiet, and recorded.
func (r *recorder) halfWritten(k config.Kept) (content []byte, half bool) {
	f, prob := r.eng.Read(k)
	if afterHalfWritten != nil {
		afterHalfWritten(k)
	}
	if prob != nil || !f.Exists {
		return nil, true
	}
	prev, err := r.eng.JudgedAgainst(f)
	if err != nil {
		return f.Content, false // recorded as any file: its record says what is wrong
	}
	return f.Content, r.eng.Check(f, prev).Invalid()
}

// afterHalfWritten, when set (tests), runs after halfWritten read k: a
// writer's next truncation, landing between that read and the record.
var afterHalfWritten func(k config.Kept)

// handle records a batch and reports whether it succeeded; invalid content
// is a success (it was judged and quarantined), an I/O failure is not.
func (r *recorder) handle(b watcher.Batch) bool { return r.handleThen(b, nil) }

// handleThen is handle, but for a rescan with recheck set (the watcher's
// Recheck), which records at once only the paths the watcher settled in
// the batch and hands every other kept path the rescan lists to recheck:
// each is read once no event has touched it for the debounce. A rescan's
// read is no settled change: it may fall between a writer's two syscalls,
// after `rm f` and before `printf … > f`, or between a truncation and the
// write after it, and record a deletion or a half-written version that no
// debounce window would have shown. When recheck takes nothing (the
// watcher is stopping), everything is recorded at once, as without it.
// A batch that reports git's index changed judges the files passed over
// as private again (rejudge): those kept now are handed to recheck too.
func (r *recorder) handleThen(b watcher.Batch, recheck func([]string) bool) bool {
	if !r.stillHere() {
		return true // nothing to retry: Run stops
	}
	r.eng.Forget()
	var kept []config.Kept
	var read map[string][]byte // the content a busy path was judged whole by (halfWritten)
	if b.Rescan {
		all, err := r.eng.AllPaths()
		if err != nil {
			r.log.Warn("rescan", "err", err)
			return false
		}
		r.skipped.reset(r.eng.Withheld())
		r.warnNote(r.eng.NoteScanned(context.Background()))
		kept = r.eng.RemoveTempLeftovers(all)
		// a line still being appended is held as an event's is: the
		// catch-up at start found a writer between two writes, and the
		// half line recorded went to the other machine (chaos, GLUE)
		kept = slices.DeleteFunc(kept, r.holdUnended)
		r.reportBadNames()
		if rescanListed != nil {
			rescanListed()
			defer rescanDone()
		}
		if recheck != nil {
			if kept, err = r.later(kept, b.Paths, recheck); err != nil {
				r.log.Warn("rescan", "err", err)
				return false
			}
		}
	} else {
		indexChanged := false
		read = map[string][]byte{}
		for _, p := range b.Paths {
			if p == r.index || slices.Contains(r.heads, p) || slices.Contains(r.ignores, p) || filepath.Base(p) == ".gitignore" {
				// judged as the index's change while it exists: one
				// removed (rm -rf .git going through it) starts no work
				// that could write into a git directory being removed
				// (git's rules read, their memo written); the next
				// rescan reads what its removal changed. A file of
				// HEAD's counts while HEAD exists: git pack-refs removes
				// the branch's loose file right after it moved
				// (attack30b F2)
				exists := p
				if slices.Contains(r.heads, p) {
					exists = r.heads[0]
				}
				if _, err := os.Lstat(exists); err == nil {
					indexChanged = true
				}
				continue
			}
			rel := p
			if filepath.IsAbs(p) {
				rel = r.eng.Config().Rel(r.eng.Root(), p)
			}
			if k, ok := r.eng.Config().Classify(rel); ok {
				if r.holdUnended(k) {
					continue
				}
				if slices.Contains(b.Busy, p) {
					content, half := r.halfWritten(k)
					if half {
						r.log.Debug("still being written", "path", rel)
						continue
					}
					// the bytes judged whole are the ones recorded: the
					// writer may have cut the file again since
					read[k.Path] = content
				}
				kept = append(kept, k)
			} else if r.eng.Config().BadName(rel) {
				r.reportBadName(rel)
			} else {
				// the watcher's Match judged it against an index read
				// before a `git rm --cached`: private now, noted as such
				r.skipped.note(rel, r.eng.Config().Private(rel))
			}
		}
		// the files turned private since the last batch (their events,
		// the ones just read, and, when the index changed, the recorded
		// ones it made private: skip-worktree set, git rm --cached, with
		// no event of the file's own): noted before rejudge may keep
		// them again
		if indexChanged {
			turned, err := r.eng.TurnedPrivate()
			r.warnNote(err)
			for _, p := range turned {
				r.skipped.note(p.Path, p.Reason)
			}
		}
		r.warnNote(r.eng.NotePrivate(context.Background(), r.skipped.takeFresh()))
		if indexChanged {
			kept = append(kept, r.rejudge(b.Paths, recheck)...)
		}
	}
	if len(kept) == 0 {
		return true
	}
	// a record of an L1 file owes the protocol until it ran (owedPath)
	protocol := slices.ContainsFunc(kept, func(k config.Kept) bool { return layers.IsL1(r.eng.Config(), k) })
	if protocol {
		r.owe()
	}
	r.unread.setBusy()
	r.mu.Lock()
	outs, err := r.eng.RecordRead(kept, state.SourceWatch, read)
	r.mu.Unlock()
	r.logNotWritten()
	r.unread.done(outs)
	if err != nil {
		r.log.Error("record", "err", err) // retried by Run; the watcher keeps running
	}
	now := time.Now()
	for _, o := range outs {
		switch {
		case o.Entry != nil:
			r.recorded++
			attrs := []any{"path", o.Path, "action", o.Entry.Action, "commit", state.ShortID(o.Entry.Commit)}
			if st, err := os.Stat(r.eng.Config().Abs(o.Path)); err == nil && o.Entry.Action != state.ActionDelete {
				attrs = append(attrs, "latency", now.Sub(st.ModTime()).Round(time.Microsecond))
			}
			r.log.Info("recorded", attrs...)
		case len(o.Problems) > 0 && o.Invalid():
			if o.Rejected != nil {
				r.rejected++
			}
			if r.problems != nil {
				fmt.Fprintln(r.problems, o.Problems.Error())
			}
			attrs := []any{"path", o.Path}
			if o.Rejected != nil {
				attrs = append(attrs, "rejected", state.ShortID(o.Rejected.Commit))
			}
			r.log.Warn("invalid", attrs...)
		case o.WaitsForLine:
			// its merge with a push's (or sync's) version waits for the
			// line being appended: held as long, then recorded merged;
			// left, nothing recorded it before the next edit
			if i := slices.IndexFunc(kept, func(k config.Kept) bool { return k.Path == o.Path }); i >= 0 {
				r.holdUnended(kept[i])
			}
		}
	}
	if err == nil {
		r.mu.Lock()
		more, err := r.agent.AfterRecord(outs)
		r.mu.Unlock()
		if err != nil {
			r.log.Error("layers", "err", err)
		} else if protocol {
			r.paid()
		}
		r.logMore(more, outs)
	}
	r.status.update(func(p *Published) { p.Recorded, p.Rejected = r.recorded, r.rejected })
	for _, o := range outs {
		if o.Entry != nil && r.kick != nil {
			select {
			case r.kick <- struct{}{}:
			default:
			}
			break
		}
	}
	return err == nil
}
