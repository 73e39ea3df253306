package gitstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// PathsSince returns the paths that the trailers of every commit reachable
// from head but not from base name ("" base: every commit of head). It is
// what a push of head publishes beyond what the remote at base holds, and
// costs one `git rev-list` plus one commit read per new commit, not a walk of
// the whole history.
func (s *Store) PathsSince(ctx context.Context, head, base string) (map[string]bool, error) {
	paths := map[string]bool{}
	err := s.eachSince(ctx, head, bases(base), func(ci commitInfo) error {
		for _, e := range parseTrailers(ci.message) {
			paths[e.Path] = true
		}
		return nil
	})
	return paths, err
}

// bases is the one base of a walk, none for "".
func bases(base string) []string {
	if base == "" {
		return nil
	}
	return []string{base}
}

// eachSince runs fn on each commit reachable from head but from none of
// bases (none: every commit of head), as `git rev-list` lists them (so
// clock skew cannot hide one), holding s.mu.
func (s *Store) eachSince(ctx context.Context, head string, bases []string, fn func(commitInfo) error) error {
	args := []string{"rev-list", head}
	for _, b := range bases {
		args = append(args, "^"+b)
	}
	args = append(args, "--")
	out, err := s.git(ctx, nil, args...)
	if err != nil {
		return fmt.Errorf("rev-list: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if len(line) != 40 {
			return fmt.Errorf("rev-list: unexpected line %q", line)
		}
		ci, err := s.readCommit(plumbing.NewHash(line))
		if err != nil {
			return err
		}
		if err := fn(ci); err != nil {
			return err
		}
	}
	return nil
}

// PathsSinceQuick is PathsSince read in-process, with no git process: the
// commits of head the merge-base walk finds base does not reach. It holds
// every path PathsSince returns, and no other unless commit dates go
// against the history (clocks skewed between machines): the walk then may
// count a commit base reaches as head's alone. A caller that finds nothing
// wrong in it has found nothing wrong in PathsSince; one that does asks
// PathsSince.
func (s *Store) PathsSinceQuick(head, base string) (map[string]bool, error) {
	h, err := s.resolve(head)
	if err != nil {
		return nil, err
	}
	var b plumbing.Hash
	if base != "" {
		if b, err = s.resolve(base); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	paths := map[string]bool{}
	add := func(ci commitInfo) {
		for _, e := range parseTrailers(ci.message) {
			paths[e.Path] = true
		}
	}
	if b.IsZero() {
		return paths, s.eachReachable(h, add)
	}
	anc, err := s.walk(h, b)
	for _, ci := range anc.oursOnly {
		add(ci)
	}
	return paths, err
}

// LastChanges walks the first-parent chain back from commit, at most max
// commits, and returns for each of paths the entry of the commit that last
// recorded it (as `strata log PATH -n 1` would at that commit). Paths not
// met within max commits are left out: the walk is bounded, so a caller
// showing optional detail (provenance in `strata at`) stays fast on any
// history.
func (s *Store) LastChanges(commit string, paths []string, max int) (map[string]state.Entry, error) {
	h, err := s.resolve(commit)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	out := map[string]state.Entry{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := 0; n < max && !h.IsZero() && len(out) < len(want); n++ {
		ci, err := s.readCommit(h)
		if err != nil {
			return out, err
		}
		for _, e := range parseTrailers(ci.message) {
			if want[e.Path] {
				if _, seen := out[e.Path]; !seen {
					e.Commit, e.Time = ci.hash.String(), commitTime(ci)
					out[e.Path] = e
				}
			}
		}
		if len(ci.parents) == 0 {
			break
		}
		h = ci.parents[0]
	}
	return out, nil
}

// VersionsSince returns, for each of paths, the blob ids that the commits
// reachable from head but not from base ("" base: every commit of head)
// hold at that path where their trailers name it: the versions of it a push
// of head publishes beyond what the remote at base holds. A commit that
// records the path's deletion adds none. Like PathsSince it asks git
// rev-list for the commits, so clock skew cannot hide one.
func (s *Store) VersionsSince(ctx context.Context, head, base string, paths []string) (map[string]map[string]bool, error) {
	return s.VersionsBeyond(ctx, head, bases(base), paths)
}

// VersionsBeyond is VersionsSince past several bases: the versions of
// paths the commits reachable from head, and from none of bases, record
// (bases: the tracking refs of every remote, for what no remote is known
// to hold).
func (s *Store) VersionsBeyond(ctx context.Context, head string, bases []string, paths []string) (map[string]map[string]bool, error) {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	versions := map[string]map[string]bool{}
	err := s.eachSince(ctx, head, bases, func(ci commitInfo) error {
		for _, e := range parseTrailers(ci.message) {
			if !want[e.Path] {
				continue
			}
			te, err := s.lookup(ci.tree, e.Path)
			if errors.Is(err, state.ErrNotFound) || err == nil && te.IsDir() {
				continue // deleted here: nothing of it is published
			}
			if err != nil {
				return err
			}
			if versions[e.Path] == nil {
				versions[e.Path] = map[string]bool{}
			}
			versions[e.Path][te.Hash.String()] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return versions, nil
}
