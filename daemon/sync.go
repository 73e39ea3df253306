package daemon

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/syncer"
)

// SyncStatus is what `strata watch --sync` publishes about its syncs.
type SyncStatus struct {
	SyncRemote    string    `json:"sync_remote,omitempty"`
	LastSync      time.Time `json:"last_sync,omitzero"`        // last successful sync
	LastSyncError string    `json:"last_sync_error,omitempty"` // of the last attempt, "" when it succeeded
	SyncFailures  int       `json:"sync_failures,omitempty"`   // failed attempts in a row
}

// maxBackoff caps the wait before retrying a remote that is down.
const maxBackoff = 5 * time.Minute

// startSync runs the periodic sync in its own goroutine, with its own engine
// (an Engine is not safe for concurrent use; the store's ref updates are), so
// a slow or unreachable remote never blocks recording. It syncs at start,
// every interval, and after the recorder records something; a failing remote
// is retried with exponential backoff. stop cancels it and waits.
func startSync(ctx context.Context, eng *engine.Engine, o Options, log *slog.Logger, r *recorder) (stop func(), err error) {
	seng, err := engine.Open(eng.Named()) // as named: its git reads what the watcher's does
	if err != nil {
		return nil, err
	}
	seng.Now = eng.Now
	interval := o.SyncInterval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	r.kick = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	// Nobody watches a terminal for the background sync: a remote asking
	// for a password fails (and is retried) instead of waiting forever.
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	// The write protocol for the edits a sync records before the recorder
	// saw them (they are then recorded, and its batch finds nothing new):
	// run on the sync's engine, under the recorder's lock as the
	// recorder's own protocol runs, and logged as its records are.
	agent := layers.New(seng, func(msg string) { log.Warn(msg) })
	afterRecord := func(outs []engine.Outcome) ([]engine.Outcome, error) {
		r.mu.Lock()
		more, err := agent.AfterRecord(outs)
		r.mu.Unlock()
		for _, o := range outs {
			if o.Entry != nil {
				log.Info("recorded by sync", "path", o.Path, "action", o.Entry.Action, "commit", state.ShortID(o.Entry.Commit))
			}
		}
		for _, o := range more {
			if o.Entry != nil {
				logRecorded(log, o)
			}
		}
		return more, err
	}
	go func() {
		defer close(done)
		var failures int
		wait := time.Duration(0) // sync at once on start
		for {
			kick := r.kick
			if failures > 0 {
				kick = nil // in backoff: local changes do not hammer a down remote
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			case <-kick:
				t.Stop()
			}
			// judged afresh each round, as the recorder's batches are: git's
			// rules and configuration, folders, nested repositories
			// (attack32 H1: a .gitignore line, a nested repository or an
			// unset strata.keepPrivate made after the watcher started did
			// not count, and the round recorded and could push the file)
			seng.Forget()
			rep, err := syncer.Sync(ctx, seng, syncer.Options{Remote: o.SyncRemote, Cwd: seng.Root(), Env: env, Lock: r.mu, AfterRecord: afterRecord})
			seng.Release() // the work tree's root, held for the round's reads
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				failures++
				wait = syncRetryWait(failures, err)
				log.Warn("sync", "remote", o.SyncRemote, "err", err, "retry_in", wait)
				r.status.update(func(p *Published) {
					p.SyncRemote, p.LastSyncError, p.SyncFailures = o.SyncRemote, err.Error(), failures
				})
				continue
			}
			failures, wait = 0, interval
			seng.SweepFreed() // this goroutine is off the recorder's path already
			log.Info("synced", "remote", o.SyncRemote, "result", rep.Result, "written", len(rep.Written), "pushed", rep.Pushed, "lost", len(rep.Lost))
			for _, l := range rep.Lost {
				attrs := []any{"path", l.Path, "rev", l.Rev, "winner", l.Winner}
				if l.CheckedOut {
					attrs = append(attrs, "checked_out", true) // the winner is a checkout there, no edit
				}
				log.Warn("sync: local version lost", append(attrs, "restore", "strata restore "+state.ShellWord(l.Path)+" --rev "+state.ShellWord(l.Rev))...)
			}
			if home, _ := seng.SyncHome(); home {
				// sync_home: true — the auto-memory file's local history too,
				// as `strata sync` does with it.
				if err := syncHome(ctx, seng, o.SyncRemote, env, r.mu, log); err != nil {
					log.Warn("sync", "remote", o.SyncRemote, "err", err)
				}
			}
			r.status.update(func(p *Published) {
				p.SyncStatus = SyncStatus{SyncRemote: o.SyncRemote, LastSync: state.Now().UTC()}
			})
		}
	}()
	return func() { cancel(); <-done }, nil
}

// syncRetryWait is how long the background sync waits after its
// failures-th failure in a row, err: exponential backoff for a remote that
// is down or refuses (its state ref's lock file left there, too), up to
// maxBackoff; a remote that moved between the
// sync's fetch and its push in every round (engine.ErrRemoteMoved: reached,
// and busy, a watcher there recording an agent's saves) is tried again in
// one to two seconds, not backed off as a remote that is down (attack41 F2:
// the wait grew to minutes, and nothing reached the other machine).
func syncRetryWait(failures int, err error) time.Duration {
	var locked *engine.RemoteLockedError
	if errors.Is(err, engine.ErrRemoteMoved) && !errors.As(err, &locked) {
		return time.Second + rand.N(time.Second)
	}
	return min(time.Second<<min(failures-1, 20), maxBackoff)
}

// syncHome syncs the home ref (the auto-memory file's history) with remote.
func syncHome(ctx context.Context, eng *engine.Engine, remote string, env []string, lock sync.Locker, log *slog.Logger) error {
	rep, err := syncer.SyncHome(ctx, eng, syncer.Options{Remote: remote, Cwd: eng.Root(), Env: env, Lock: lock})
	if err != nil {
		return err
	}
	log.Info("synced home", "remote", remote, "result", rep.Result, "written", len(rep.Written), "pushed", rep.Pushed, "lost", len(rep.Lost))
	if len(rep.Dropped) > 0 {
		log.Warn("dropped from the home history: it holds only "+engine.HomeName+" (the auto-memory file)", "remote", remote, "paths", len(rep.Dropped), "first", state.ShownPath(rep.Dropped[0]))
	}
	return nil
}
