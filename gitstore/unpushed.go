package gitstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// PathsSince returns the paths that the trailers of every commit reachable
// from head but not from base name ("" base: every commit of head). It is
// what a push of head publishes beyond what the remote at base holds, and
// costs one `git rev-list` plus one commit read per new commit, not a walk of
// the whole history.
func (s *Store) PathsSince(ctx context.Context, head, base string) (map[string]bool, error) {
	args := []string{"rev-list", head}
	if base != "" {
		args = append(args, "^"+base)
	}
	args = append(args, "--")
	out, err := s.git(ctx, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("rev-list: %w", err)
	}
	paths := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if len(line) != 40 {
			return nil, fmt.Errorf("rev-list: unexpected line %q", line)
		}
		ci, err := s.readCommit(plumbing.NewHash(line))
		if err != nil {
			return nil, err
		}
		for _, e := range parseTrailers(ci.message) {
			paths[e.Path] = true
		}
	}
	return paths, nil
}
