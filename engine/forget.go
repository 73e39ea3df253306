package engine

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/strata-dev/strata/gitstore"
)

// Forgotten is what Forget did; see gitstore.Forgotten.
type Forgotten = gitstore.Forgotten

// ForgetUnpublished rewrites the state history no remote holds yet so that it brings
// no version of paths (gitstore.Store.Forget): the way out when sync
// refuses to publish a path made private, or no longer kept, after a
// version of it was recorded, and the way to take back a secret recorded
// before it was published. It waits for a running sync of this work tree
// and for the records under way, and first completes the writes of a sync
// that was interrupted (their undone writes are returned), so the journal's
// merge is never rewritten under it. With dry set nothing is written.
//
// With remote set, only what that remote is known to hold (its tracking
// ref) counts as published, and the paths' notes of versions found
// private stay.
func (e *Engine) ForgetUnpublished(ctx context.Context, paths []string, dry bool, remote string) (Forgotten, error) {
	var only *Remote
	var tracking []string
	if remote != "" {
		r, err := e.store.ResolveRemote(ctx, remote, e.cfg.Root)
		if err != nil {
			return Forgotten{}, err
		}
		only, tracking = &r, []string{r.Ref}
	}
	if !dry {
		// a push's versions written first: forget's own move of the ref
		// would otherwise refuse (pushed.go)
		if err := e.takePush(); err != nil {
			return Forgotten{}, err
		}
	}
	releaseSync, err := e.HoldSync()
	if err != nil {
		return Forgotten{}, err
	}
	defer releaseSync()
	stale := e.refreshTracking(ctx, only)
	release, err := e.HoldWrites()
	if err != nil {
		return Forgotten{}, err
	}
	defer release()
	if err := e.recoverWrites(false); err != nil { // under the exclusive lock: no Put
		return Forgotten{}, err
	}
	res, err := e.store.Forget(ctx, paths, dry, tracking...)
	res.Stale = stale
	if err == nil && !dry {
		err = e.remapLosses(res.Mapped, paths)
	}
	if err == nil && !dry && remote == "" {
		// the refused versions out of the history are no longer withheld;
		// those a remote holds are still in it, and stay noted: a remote
		// that never got them must not get them now (attack29 F2).
		// Taken out of one remote's share only (--remote), every one
		// stays noted: the remote that holds them brings them back with
		// its history at the next sync with it, and this remote must not
		// get them then (attack28-recheck3 F4b)
		err = e.narrowNote(ctx, paths)
	}
	return res, err
}

// refreshTracking fetches the remotes whose tracking refs decide what is
// published (only, or every remote a tracking ref was fetched from), so
// that a push whose acknowledgement was lost — the remote holds commits
// the tracking ref does not reach — does not make forget rewrite commits
// the remote already has (a next sync would bring the originals back). A
// remote that cannot be fetched is named in the result; its tracking ref
// counts as last fetched.
func (e *Engine) refreshTracking(ctx context.Context, only *Remote) (stale []string) {
	fetch := func(name string, r Remote, err error) {
		if err == nil {
			_, err = e.store.Fetch(ctx, r)
		}
		if err != nil {
			why, _, _ := strings.Cut(err.Error(), "\n")
			stale = append(stale, name+": "+why)
		}
	}
	if only != nil {
		fetch(only.Name, *only, nil)
		return stale
	}
	refs, err := e.store.TrackingRefs()
	if err != nil {
		return nil
	}
	names := slices.Sorted(maps.Values(refs))
	for _, n := range names {
		r, err := e.store.ResolveRemote(ctx, n, e.cfg.Root)
		fetch(n, r, err)
	}
	return stale
}

// remapLosses brings the kept sync losses (sync-lost.json) in line with a
// rewrite: an entry of a forgotten path goes (its versions are gone from
// the history), and the commits an entry names are replaced by those that
// now stand for them, so `strata restore PATH --rev REV` keeps working after
// the old commits are pruned.
func (e *Engine) remapLosses(mapped map[string]string, paths []string) error {
	old, err := e.readLosses()
	if err != nil || len(old) == 0 {
		return err
	}
	var keep []keptLoss
	for _, l := range old {
		if slices.Contains(paths, l.Path) {
			continue
		}
		for _, id := range []*string{&l.Rev, &l.Winner, &l.Merge} {
			if n, ok := mapped[*id]; ok && n != "" {
				*id = n
			}
		}
		keep = append(keep, l)
	}
	return e.writeLosses(keep)
}
