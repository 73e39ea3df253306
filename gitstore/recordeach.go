package gitstore

import (
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// PackMin is the number of objects from which a batch of changes
// (RecordEach) is written as one pack file with its index instead of loose
// objects. One change writes four or five objects (blob, a tree per level,
// commit). Measured on ext4 (BenchmarkRecordBatch): one change costs about
// the same either way (a pack's two fsyncs against four or five new files),
// two changes already half as much as a pack, sixteen a third. One change —
// the watcher's usual batch — stays loose, which also keeps the number of
// small packs, which every look-up that misses searches, down.
var PackMin = 8

// RecordEach records each change as its own commit on StateRef, in order:
// the first commit's parent is the ref's head, each next commit's the one
// before, and each tree is the previous snapshot with that one change
// applied, as len(changes) calls of Record would write. A change that
// changes nothing (the same content as the snapshot before it, or the
// deletion of an absent path) writes no commit, and its entry is the zero
// Entry. When no change is left RecordEach returns state.ErrUnchanged.
//
// Every object of the batch goes into one pack (PackMin) that is written,
// and synced, before the ref moves once to the last commit, by
// compare-and-swap: if another writer moved it in between, the chain is
// rebuilt on the new head. The ref never names an object that is not yet
// in the object database. Errors are those of Record.
func (s *Store) RecordEach(changes []state.Change) ([]state.Entry, error) {
	if len(changes) == 0 {
		return nil, state.ErrUnchanged
	}
	for _, ch := range changes {
		if err := ValidPath(ch.Path); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	blobs := make([]plumbing.Hash, len(changes))
	for i, ch := range changes {
		if !ch.Deleted {
			blobs[i] = plumbing.ComputeHash(plumbing.BlobObject, ch.Content)
		}
	}
	out := make([]state.Entry, len(changes))
	commits := 0
	_, err := s.updateRef(s.StateRef(), func(parent plumbing.Hash) (_ plumbing.Hash, err error) {
		clear(out)
		commits = 0
		s.objects.Begin()
		defer func() {
			if err != nil {
				s.objects.Abort()
			}
		}()
		var root plumbing.Hash
		if !parent.IsZero() {
			if root, err = s.commitTree(parent); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("head: %w", err)
			}
		}
		cur := parent
		var one []pending
		for i, ch := range changes {
			one, err = s.classify(one[:0], root, []string{ch.Path},
				map[string]state.Change{ch.Path: ch}, map[string]plumbing.Hash{ch.Path: blobs[i]})
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if len(one) == 0 {
				continue
			}
			pd := one[0]
			if pd.action != state.ActionDelete {
				if err := s.storeObject(plumbing.BlobObject, ch.Content, pd.blob); err != nil {
					return plumbing.ZeroHash, fmt.Errorf("%s: %w", ch.Path, err)
				}
			}
			newRoot, err := s.applyChanges(root, one)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			exact := latestExact(one)
			when := exact.Truncate(time.Second)
			c, err := s.writeCommit(newRoot, cur, when, recordMessage(one, exact))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			out[i] = entries(c, when, one)[0]
			cur, root = c, newRoot
			commits++
		}
		if commits == 0 {
			return plumbing.ZeroHash, state.ErrUnchanged
		}
		if err := s.objects.Flush(PackMin, Fsync); err != nil {
			return plumbing.ZeroHash, err
		}
		return cur, nil
	})
	if err != nil {
		return nil, err
	}
	s.countRecords(commits)
	return out, nil
}
