package engine

import (
	"context"

	"github.com/strata-dev/strata/gitstore"
)

// The sync verbs: the store's remote and merge operations, on the state ref,
// for package syncer. The merge's types are the store's, named here so that
// callers need not import gitstore.

type (
	// Remote is a remote as sync uses it.
	Remote = gitstore.Remote
	// RemoteError is a failed git fetch or push.
	RemoteError = gitstore.RemoteError
	// Merge is a planned or recorded merge of two state histories.
	Merge = gitstore.Merge
	// MergePath is one path of a merge: its versions and the decision.
	MergePath = gitstore.MergePath
	// MergeKind is what a merge did.
	MergeKind = gitstore.MergeKind
	// Lost is a local version a merge did not take.
	Lost = gitstore.Lost
	// TreeBoundError is a commit whose tree nests deeper, or names a path
	// longer, than a kept path may, met by a merge (its role named).
	TreeBoundError = gitstore.TreeBoundError
)

// BlobHash is the git blob id of data.
func BlobHash(data []byte) string { return gitstore.BlobHash(data) }

// MergedExcept opens the report of a merge that could not keep every edit
// (see MergePath.Dropped).
const MergedExcept = gitstore.MergedExcept

// MergeUpToDate is the merge of a history with one it already holds.
const MergeUpToDate = gitstore.MergeUpToDate

// MergeFastForward is the merge of a history into one that holds it.
const MergeFastForward = gitstore.MergeFastForward

// ErrRemoteMoved is returned by Push when the remote's state ref moved
// since the fetch.
var ErrRemoteMoved = gitstore.ErrRemoteMoved

// RemoteLockedError is a push refused because the remote's state ref lock
// file exists (it counts as ErrRemoteMoved; one that stays may be left by a
// push killed there).
type RemoteLockedError = gitstore.RemoteLockedError

// ResolveRemote names a remote for sync (see gitstore.Store.ResolveRemote).
func (e *Engine) ResolveRemote(ctx context.Context, name, cwd string) (Remote, error) {
	return e.store.ResolveRemote(ctx, name, cwd)
}

// Fetch fetches the remote's state ref into its tracking ref and returns its
// head ("" when the remote has none).
func (e *Engine) Fetch(ctx context.Context, r Remote) (string, error) {
	return e.store.Fetch(ctx, r)
}

// Push moves the remote's state ref from expected to commit by
// compare-and-swap; ErrRemoteMoved when it no longer holds expected.
func (e *Engine) Push(ctx context.Context, r Remote, commit, expected string) error {
	return e.store.Push(ctx, r, commit, expected)
}

// PlanMerge plans the merge of theirs into ours without recording anything,
// at the engine's time (a recorded time past it counts as it).
func (e *Engine) PlanMerge(ours, theirs string) (*Merge, error) {
	return e.store.PlanMerge(ours, theirs, e.Now())
}

// MergeState merges theirs into the state ref, with check run on the plan
// before anything is recorded, at the engine's time.
func (e *Engine) MergeState(theirs, title string, check func(*Merge) error) (*Merge, error) {
	return e.store.MergeInto(e.store.StateRef(), theirs, title, e.Now(), check)
}

// TrackingRefs lists the tracking refs of remotes synced with: ref -> remote.
func (e *Engine) TrackingRefs() (map[string]string, error) {
	return e.store.TrackingRefs()
}

// RefHead returns a ref's head commit; an error wrapping state.ErrNotFound
// when the ref does not exist.
func (e *Engine) RefHead(ref string) (string, error) {
	return e.store.Head(ref)
}

// Compare counts the commits of a not in b (ahead) and of b not in a (behind).
func (e *Engine) Compare(a, b string) (ahead, behind int, err error) {
	return e.store.Compare(a, b)
}

// HeldLock describes the state ref's lock when it has been held past the
// age at which strata takes a lock for abandoned (see gitstore.HeldLock).
func (e *Engine) HeldLock() (gitstore.HeldLock, bool) {
	return e.store.HeldLock(e.store.StateRef())
}
