package gitstore

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// UnsafeTreeError is a fetched state ref whose tree holds an entry strata
// refuses: a name state.CheckName refuses (empty, ".", "..", a name of
// ".git" on any file system, a slash), a mode other than a regular blob
// (100644, 100755) or a tree (40000, as git spells it), a duplicate name or
// entries out of git's order. Nothing of such a head is merged or written.
type UnsafeTreeError struct {
	Remote string
	Commit string // the fetched head
	Path   string // the entry's path in the head's tree, as far as it could be named
	Reason string
}

func (e *UnsafeTreeError) Error() string {
	return fmt.Sprintf("sync %s: refused the remote's state %s: entry %s: %s (nothing merged)",
		e.Remote, state.ShortID(e.Commit), quotePath(e.Path), e.Reason)
}

// verifiedTrees holds tree objects already found safe, with their whole
// subtree. A tree's id names its content, so one verdict holds in every
// repository; the set is dropped when it grows large.
var verifiedTrees = struct {
	sync.Mutex
	m map[plumbing.Hash]struct{}
}{m: map[plumbing.Hash]struct{}{}}

const maxVerifiedTrees = 1 << 16

// checkFetched checks the whole tree of a fetched head, every path and mode
// in it, before anything of it is merged or fast-forwarded to.
func (s *Store) checkFetched(remote string, head plumbing.Hash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ci, err := s.readCommit(head)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", remote, err)
	}
	if p, why := s.checkTree(ci.tree, ""); why != "" {
		return &UnsafeTreeError{Remote: remote, Commit: head.String(), Path: p, Reason: why}
	}
	return nil
}

// checkTree checks one tree object and, recursively, its subtrees; it
// returns the path at fault and why, or "" when all is well. Callers hold s.mu.
func (s *Store) checkTree(h plumbing.Hash, dir string) (string, string) {
	verifiedTrees.Lock()
	_, done := verifiedTrees.m[h]
	verifiedTrees.Unlock()
	if done {
		return "", ""
	}
	name := dir
	if name == "" {
		name = "/"
	}
	t, raw, err := s.readObject(h)
	switch {
	case err != nil:
		return name, "unreadable tree: " + err.Error()
	case t != plumbing.TreeObject:
		return name, "a " + t.String() + " where a tree is expected"
	}
	var prev []byte
	names := map[string]bool{} // a file and a tree of the same name sort apart
	var subtrees []plumbing.Hash
	var subnames []string
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		nul := bytes.IndexByte(raw, 0)
		if sp < 0 || nul < sp || len(raw) < nul+21 {
			return name, "corrupt tree"
		}
		mode, entry := string(raw[:sp]), raw[sp+1:nul]
		var id plumbing.Hash
		copy(id[:], raw[nul+1:nul+21])
		raw = raw[nul+21:]
		p := string(entry)
		if dir != "" {
			p = dir + "/" + p
		}
		if err := state.CheckName(string(entry)); err != nil {
			return p, err.Error()
		}
		if id.IsZero() {
			return p, "null object id"
		}
		// git's order: a tree sorts as if its name ended in "/"; strictly
		// increasing also rules out duplicate names of the same kind.
		key := append([]byte{}, entry...)
		switch mode {
		case "100644", "100755":
		case "40000":
			key = append(key, '/')
			subtrees, subnames = append(subtrees, id), append(subnames, p)
		case "120000":
			return p, "a symbolic link, not a regular file"
		case "160000":
			return p, "a gitlink (submodule), not a regular file"
		default:
			return p, "mode " + mode + ", want 100644, 100755 or 40000"
		}
		if names[string(entry)] || prev != nil && bytes.Compare(prev, key) >= 0 {
			return p, "duplicate or unsorted tree entry"
		}
		prev, names[string(entry)] = key, true
	}
	for i, sub := range subtrees {
		if p, why := s.checkTree(sub, subnames[i]); why != "" {
			return p, why
		}
	}
	verifiedTrees.Lock()
	if len(verifiedTrees.m) >= maxVerifiedTrees {
		verifiedTrees.m = map[plumbing.Hash]struct{}{}
	}
	verifiedTrees.m[h] = struct{}{}
	verifiedTrees.Unlock()
	return "", ""
}

// untrack puts a tracking ref back to what it held before a refused fetch
// and returns why the fetch was refused.
func (s *Store) untrack(ref string, before plumbing.Hash, why error) error {
	var err error
	if before.IsZero() {
		err = s.deleteRef(ref)
	} else {
		err = s.setRef(ref, before)
	}
	if err != nil {
		return fmt.Errorf("%w; reset %s: %v", why, ref, err)
	}
	return why
}
