package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/watcher"
)

// TestBusyHalfWrittenWaits: a path the watcher reports while its writer is
// still at it (Batch.Busy) is recorded when what is read is valid, and
// otherwise neither recorded nor rejected nor reported: a half-written
// file is no version (attack19-watch 7: an 8 MB file written in chunks
// gave three "invalid JSON" lines and three commits on refs/strata/rejected).
// Reported quiet, an invalid file is rejected as before.
func TestBusyHalfWrittenWaits(t *testing.T) {
	eng := newRepo(t)
	r, problems := busyRecorder(t, eng)
	const p = ".claude/big.json"
	count := func() (recorded, rejected int) {
		ents, _ := eng.Log(state.LogQuery{Path: p})
		rej, _ := eng.RejectedLog(state.LogQuery{Path: p})
		return len(ents), len(rej)
	}

	write(t, eng, p, `{"a": [1, 2, `) // a writer half-way
	r.handle(watcher.Batch{Paths: []string{p}, Busy: []string{p}})
	if rec, rej := count(); rec != 0 || rej != 0 || len(*problems) != 0 {
		t.Fatalf("half-written, busy: %d recorded, %d rejected, problems %q", rec, rej, *problems)
	}
	write(t, eng, p, `{"a": [1, 2, 3]}`)
	r.handle(watcher.Batch{Paths: []string{p}, Busy: []string{p}})
	if rec, rej := count(); rec != 1 || rej != 0 {
		t.Fatalf("valid, busy: %d recorded, %d rejected", rec, rej)
	}
	write(t, eng, p, `{"a": [1, 2, `)
	r.handle(watcher.Batch{Paths: []string{p}}) // quiet: the writer stopped there
	if rec, rej := count(); rec != 1 || rej != 1 || len(*problems) == 0 {
		t.Fatalf("invalid, quiet: %d recorded, %d rejected, problems %q", rec, rej, *problems)
	}

	// Missing while busy: a writer deleting and making the file again, over
	// and over, caught between the two (attack24, the watcher's spurious
	// deletions), records no deletion; reported quiet, the deletion is.
	const q = ".claude/again.json"
	write(t, eng, q, `{"n": 1}`)
	r.handle(watcher.Batch{Paths: []string{q}})
	if err := os.Remove(eng.Config().Abs(q)); err != nil {
		t.Fatal(err)
	}
	r.handle(watcher.Batch{Paths: []string{q}, Busy: []string{q}})
	if ents, _ := eng.Log(state.LogQuery{Path: q}); len(ents) != 1 {
		t.Fatalf("missing, busy: %d records, want the first only: %+v", len(ents), ents)
	}
	r.handle(watcher.Batch{Paths: []string{q}}) // quiet: it stayed deleted
	if ents, _ := eng.Log(state.LogQuery{Path: q}); len(ents) != 2 || ents[0].Action != state.ActionDelete {
		t.Fatalf("missing, quiet: %+v; want the deletion recorded", ents)
	}
}

// TestBusyRecordsWhatItJudged: a busy path read whole is recorded with the
// bytes that read gave, not read again: the writer's next truncation,
// landing between the two reads, was recorded as an empty version,
// rejected and reported (attack30c G1: 3-20 "file is empty" lines in 20 s
// of a writer that never paused).
func TestBusyRecordsWhatItJudged(t *testing.T) {
	eng := newRepo(t)
	r, problems := busyRecorder(t, eng)
	const p = ".claude/busy.json"
	write(t, eng, p, `{"n": 1}`)
	afterHalfWritten = func(k config.Kept) { write(t, eng, k.Path, "") } // the writer's next open(O_TRUNC)
	defer func() { afterHalfWritten = nil }()
	r.handle(watcher.Batch{Paths: []string{p}, Busy: []string{p}})
	rej, _ := eng.RejectedLog(state.LogQuery{Path: p})
	if len(rej) != 0 || len(*problems) != 0 {
		t.Fatalf("%d rejected, problems %q; want the whole version read recorded", len(rej), *problems)
	}
	ents, _ := eng.Log(state.LogQuery{Path: p})
	if len(ents) != 1 {
		t.Fatalf("%d recorded, want 1", len(ents))
	}
	data, err := eng.Show(p, engine.Point{Rev: ents[0].Commit})
	if err != nil || string(data) != `{"n": 1}` {
		t.Fatalf("recorded %q (%v), want the bytes judged whole", data, err)
	}
}

// TestBusyRecordsWhatItJudgedHome: the same for the auto-memory file in
// the home folder, recorded on the home ref: recordHome read the file
// again, so the writer's truncation between the two was recorded.
func TestBusyRecordsWhatItJudgedHome(t *testing.T) {
	eng := newRepo(t)
	r, problems := busyRecorder(t, eng)
	p := eng.Config().AutoMemory()
	const whole = "# Memory\n\n- a learning\n"
	write(t, eng, p, whole)
	eng.Config().RefreshL2() // the L2 file now: no candidate in the work tree
	if _, ok := eng.Config().Classify(p); !ok {
		t.Fatalf("%s is not kept", p)
	}
	afterHalfWritten = func(k config.Kept) { write(t, eng, k.Path, "") } // the writer's next open(O_TRUNC)
	defer func() { afterHalfWritten = nil }()
	r.handle(watcher.Batch{Paths: []string{eng.Config().Abs(p)}, Busy: []string{eng.Config().Abs(p)}})
	ents, _ := eng.Log(state.LogQuery{Path: p})
	if len(ents) != 1 {
		t.Fatalf("%d recorded (problems %q), want 1", len(ents), *problems)
	}
	data, err := eng.Show(p, engine.Point{Rev: ents[0].Commit})
	if err != nil || string(data) != whole {
		t.Fatalf("recorded %q (%v), want the bytes judged whole", data, err)
	}
}

// busyRecorder is a recorder of eng, holding the watcher's lock as Run
// does, whose problem lines the test reads in *problems.
func busyRecorder(t *testing.T, eng *engine.Engine) (*recorder, *[]byte) {
	t.Helper()
	lock, held := holdLock(t, eng)
	pl, err := here(eng, lock)
	if err != nil {
		t.Fatal(err)
	}
	problems := new([]byte)
	r := &recorder{eng: eng, log: slog.New(slog.DiscardHandler), status: &publisher{lock: held}, mu: &sync.Mutex{},
		unread: &unreadPaths{}, place: pl, problems: writerFunc(func(b []byte) { *problems = append(*problems, b...) })}
	r.agent = layers.New(eng, nil)
	return r, problems
}

// holdLock takes the watcher's lock of eng, as Run does, until the test
// ends, for a test that drives a recorder or one watch run itself.
func holdLock(t *testing.T, eng *engine.Engine) (string, *pidlock.Lock) {
	t.Helper()
	lock := LockPath(eng)
	held, err := pidlock.Acquire(lock, eng.Shared())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Release() })
	return lock, held
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// TestReloadSeesAnEditBeforeItsStart: a run whose engine read .strata.yaml
// before an edit it has not loaded (its stamp then differs from the file's
// now) reloads at its first batch, the catch-up: an edit made between a
// reload's read and the new run's start was never loaded (attack19 verify
// N6: a rule added right after another was still not in force 76 s later).
func TestReloadSeesAnEditBeforeItsStart(t *testing.T) {
	eng := newRepo(t)
	_, held := holdLock(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := here(eng, LockPath(eng))
	if err != nil {
		t.Fatal(err)
	}
	next, _, err := watch(ctx, eng, p, "a stamp from before the last edit", true, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour},
		slog.New(slog.DiscardHandler), &publisher{lock: held})
	if err != nil || next == nil {
		t.Fatalf("watch: engine %v, %v; want a reload", next, err)
	}
}

// A reload that finds the repository removed and made again at the same
// path (rm -rf R; git init R) stops the watcher: it keeps the place it
// started in, and does not start over in the new repository beside that
// one's own watcher (attack22-verify V-9).
func TestReloadIntoAReplacedRepositoryStops(t *testing.T) {
	eng := newRepo(t)
	_, held := holdLock(t, eng)
	started, err := here(eng, LockPath(eng))
	if err != nil {
		t.Fatal(err)
	}
	root := eng.Root()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte("# the new one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := engine.Open(root) // what the reload opens
	if err != nil {
		t.Fatal(err)
	}
	holdLock(t, again) // the new repository's own watcher
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	next, _, err := watch(ctx, again, started, "", true, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour},
		slog.New(slog.DiscardHandler), &publisher{lock: held})
	if next != nil || !errors.Is(err, state.ErrNotRepo) {
		t.Fatalf("watch: engine %v, %v; want the work tree said gone", next, err)
	}
}

// TestHeadBeingLinkedIsNoRepositoryGone: with core.preferSymlinkRefs, git
// checkout of another branch removes HEAD and then makes the link in its
// place, holding HEAD.lock: a watcher that looks in between finds no HEAD
// and took its git directory for removed (it stopped, exit 3, and the
// changes after the checkout went unrecorded:
// watch_reset_soft_no_reflog.txtar under load). A HEAD missing with no
// lock is still a git directory gone.
func TestHeadBeingLinkedIsNoRepositoryGone(t *testing.T) {
	eng := newRepo(t)
	holdLock(t, eng)
	p, err := here(eng, LockPath(eng))
	if err != nil {
		t.Fatal(err)
	}
	head := filepath.Join(eng.GitDir(), "HEAD")
	// as git's create_ref_symlink does it, a writer slowed down between
	// its removal of HEAD and its link
	if err := os.WriteFile(head+".lock", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(head); err != nil {
		t.Fatal(err)
	}
	linked := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		err := os.Symlink("refs/heads/linked", head)
		if err == nil {
			err = os.Remove(head + ".lock")
		}
		linked <- err
	}()
	if err := p.check(); err != nil {
		t.Errorf("check while HEAD is being linked: %v, want the repository still there", err)
	}
	if err := goneNow(eng); err != nil {
		t.Errorf("goneNow while HEAD is being linked: %v, want nil", err)
	}
	if err := <-linked; err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(head); err != nil {
		t.Fatal(err)
	}
	if err := p.check(); !errors.Is(err, state.ErrNotRepo) {
		t.Errorf("check with no HEAD and no HEAD.lock: %v, want the git directory said gone", err)
	}
}
