package gitstore

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/strata-dev/strata/state"
)

// OpenHome opens dir's repository, as Open does, for the history of the
// files strata keeps outside the work tree (Claude Code's auto-memory file
// in the home directory). Its StateRef and RejectedRef are
// refs/strata/home/state and refs/strata/home/rejected (in a linked
// worktree refs/strata/worktrees/<name>/home/state and .../home/rejected):
// local refs that Fetch and Push never name, so what is recorded there never
// leaves the machine with a sync. o are as for OpenWith.
func OpenHome(dir string, o Options) (*Store, error) {
	s, err := OpenWith(dir, o)
	if err != nil {
		return nil, err
	}
	s.prefix = "home/"
	return s, nil
}

// HomeFile is the one file a home history holds: the auto-memory file,
// under its name in the home ref's tree (engine.HomeName).
const HomeFile = "memory/MEMORY.md"

// foreign reports whether path is one a home store's history must not
// hold: any path but HomeFile. Such a path comes from a remote's home ref,
// put there by anyone who can push it (or taken from one by a strata before
// this one): it is never written to disk, but held on the local home ref it
// was pushed back at each sync and listed by log (attack35d L2). Refusing
// the whole history instead locked every machine out of home sync for good
// once such a path was in the shared history (attack35f M1), so a home
// merge drops it, and DropForeign drops what the local ref holds. Always
// false for a store that is not a home store.
func (s *Store) foreign(path string) bool {
	return s.prefix == "home/" && path != HomeFile
}

// DropForeign records, on a home store's state ref, the deletion of every
// path its head holds but HomeFile (foreign): one commit, source sync, at
// when, whose delete blocks name them. It returns the paths dropped, none
// (and no commit) when the head holds no such path or the store is not a
// home store.
func (s *Store) DropForeign(when time.Time) ([]string, error) {
	if s.prefix != "home/" {
		return nil, nil
	}
	head, err := s.Head(s.StateRef())
	if err != nil || head == "" {
		if errors.Is(err, state.ErrNotFound) {
			err = nil
		}
		return nil, err
	}
	files, err := s.Files(head)
	if err != nil {
		return nil, err
	}
	var drop []string
	var changes []state.Change
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if s.foreign(p) {
			drop = append(drop, p)
			changes = append(changes, state.Change{Path: p, Deleted: true, Source: state.SourceSync, Time: when})
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	if _, err := s.Record(changes...); err != nil && !errors.Is(err, state.ErrUnchanged) {
		return nil, fmt.Errorf("drop %s from the home history: %w", state.ShownPath(drop[0]), err)
	}
	return drop, nil
}
