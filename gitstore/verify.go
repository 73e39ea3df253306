package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// UnsafeTreeError is a fetched state ref whose tree holds an entry strata
// refuses: a name state.CheckName refuses (empty, ".", "..", a name of
// ".git" on any file system, a slash), a mode other than a regular blob
// (100644, 100755) or a tree (40000, as git spells it), a duplicate name,
// entries out of git's order, a path deeper or longer than
// state.CheckPath allows (state.MaxPathDepth, state.MaxPathLen), more files
// in all than maxRemoteFiles, or a tree object over maxTreeObject bytes.
// Nothing of such a head is merged or written.
type UnsafeTreeError struct {
	Remote string
	Commit string // the fetched head
	// In is the commit at fault when it is not the head: one below it that
	// the local state ref does not hold yet (checkNew).
	In     string
	Path   string // the entry's path in the head's tree, as far as it could be named
	Reason string
}

func (e *UnsafeTreeError) Error() string {
	in := ""
	if e.In != "" && e.In != e.Commit {
		in = "commit " + state.ShortID(e.In) + ": "
	}
	if e.Remote == PushedIn {
		return fmt.Sprintf("its state %s: %sentry %s: %s", state.ShortID(e.Commit), in, shownPath(e.Path), e.Reason)
	}
	return fmt.Sprintf("sync %s: refused the remote's state %s: %sentry %s: %s (nothing merged)",
		e.Remote, state.ShortID(e.Commit), in, shownPath(e.Path), e.Reason)
}

// verifiedTrees holds tree objects already found safe, with their whole
// subtree, and the size of the paths below them: a tree's id names its
// content, so one verdict holds in every repository, but the bounds on a
// path (state.MaxPathDepth, state.MaxPathLen) depend on where the tree sits.
// The set is dropped when it grows large.
var verifiedTrees = struct {
	sync.Mutex
	m map[plumbing.Hash]treeSize
}{m: map[plumbing.Hash]treeSize{}}

// treeSize is the size of the longest paths under a tree, relative to it,
// and how many files it holds.
type treeSize struct {
	elems int // elements of the path with the most ("f" is 1, "d/f" is 2)
	bytes int // bytes of the longest path
	files int // files and folders under it, a subtree named twice counted twice
}

// maxRemoteFiles is how many files a fetched head's tree may hold, counted
// before anything of it is merged: a merge and its validation cost memory
// per file (about 9 KB each), and a push of a few hundred kilobytes can name
// millions of files through one tree, or through one subtree named again
// and again. Ten times the 10 000 kept files the watcher is sized for. A
// variable so that tests can lower it.
var maxRemoteFiles = 100_000

// maxTreeObject bounds one tree object of a fetched head (its size learnt
// from the object header, before it is read): 100 000 entries of names
// over 600 bytes.
var maxTreeObject int64 = 64 << 20

// fits reports whether the paths under a tree of this size stay within the
// bounds when the tree sits at dir, of depth elements.
func (z treeSize) fits(dir string, depth int) bool {
	n := z.bytes
	if dir != "" {
		n += len(dir) + 1
	}
	return depth+z.elems <= state.MaxPathDepth && n <= state.MaxPathLen
}

const maxVerifiedTrees = 1 << 16

// checkFetched checks the whole tree of a fetched head, every path and mode
// in it, before anything of it is merged or fast-forwarded to.
func (s *Store) checkFetched(remote string, head plumbing.Hash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ci, err := s.readCommit(head)
	var nc *notCommit
	if errors.As(err, &nc) {
		// a remote's ref naming a blob, a tree or a tag is a state
		// refused, as a hostile tree is (exit 3), not a version not
		// found (attack35 L2)
		return &UnsafeTreeError{Remote: remote, Commit: head.String(), Path: "/", Reason: nc.Error()}
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", remote, err)
	}
	seen := 0
	if p, why, _ := s.checkTree(ci.tree, "", 0, &seen); why != "" {
		return &UnsafeTreeError{Remote: remote, Commit: head.String(), Path: p, Reason: why}
	}
	return nil
}

// checkTree checks one tree object at dir (depth elements deep; "" and 0
// for the root) and, recursively, its subtrees; it returns the path at
// fault and why, or "" and the size of the paths under the tree. A path
// deeper or longer than state.CheckPath allows is refused where it crosses
// the bound, before any deeper tree is read, so the recursion and the paths
// it builds stay within the bounds whatever the remote sent. seen counts
// the files of the head found before this tree (in the trees that hold it
// and their earlier subtrees): once they and this tree's pass
// maxRemoteFiles, the head is refused there, before another tree is read.
// Callers hold s.mu.
func (s *Store) checkTree(h plumbing.Hash, dir string, depth int, seen *int) (string, string, treeSize) {
	name := dir
	if name == "" {
		name = "/"
	}
	verifiedTrees.Lock()
	z, done := verifiedTrees.m[h]
	verifiedTrees.Unlock()
	if done && z.fits(dir, depth) {
		if *seen+z.files > maxRemoteFiles {
			return name, tooMany(), z
		}
		return "", "", z
	}
	raw, why := s.fetchedTree(h)
	if why != "" {
		return name, why, z
	}
	z = treeSize{}
	var prev []byte
	names := map[string]bool{} // a file and a tree of the same name sort apart
	var subtrees []plumbing.Hash
	var subnames []string
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		nul := bytes.IndexByte(raw, 0)
		if sp < 0 || nul < sp || len(raw) < nul+21 {
			return name, "corrupt tree", z
		}
		mode, entry := string(raw[:sp]), raw[sp+1:nul]
		var id plumbing.Hash
		copy(id[:], raw[nul+1:nul+21])
		raw = raw[nul+21:]
		p := string(entry)
		if dir != "" {
			p = dir + "/" + p
		}
		if len(p) > state.MaxPathLen {
			return p[:200] + "...", fmt.Sprintf("path of %d bytes, over %d", len(p), state.MaxPathLen), z
		}
		if err := state.CheckName(string(entry)); err != nil {
			return p, err.Error(), z
		}
		if id.IsZero() {
			return p, "null object id", z
		}
		// git's order: a tree sorts as if its name ended in "/"; strictly
		// increasing also rules out duplicate names of the same kind.
		key := append([]byte{}, entry...)
		if why := modeFault(mode, s.foreign(p)); why != "" {
			return p, why, z
		}
		// a folder counts as an entry too: nested shared empty trees name
		// no file but cost every walk of the tree (attack19 verify-remote
		// N1: 10^8 trees from a 160 KB push)
		if z.files++; *seen+z.files > maxRemoteFiles {
			return name, tooMany(), z
		}
		if mode == "40000" {
			if depth+1 >= state.MaxPathDepth {
				return p, fmt.Sprintf("trees nested more than %d deep", state.MaxPathDepth-1), z
			}
			key = append(key, '/')
			subtrees, subnames = append(subtrees, id), append(subnames, p)
		}
		if names[string(entry)] || prev != nil && bytes.Compare(prev, key) >= 0 {
			return p, "duplicate or unsorted tree entry", z
		}
		prev, names[string(entry)] = key, true
		z.elems, z.bytes = max(z.elems, 1), max(z.bytes, len(entry))
	}
	for i, sub := range subtrees {
		*seen += z.files // the files of this tree's subtrees checked so far, and its own
		p, why, sz := s.checkTree(sub, subnames[i], depth+1, seen)
		*seen -= z.files
		if why != "" {
			return p, why, z
		}
		if z.files += sz.files; *seen+z.files > maxRemoteFiles {
			return name, tooMany(), z
		}
		n := len(subnames[i]) - len(dir) // the entry's name, and the "/" after dir
		if dir == "" {
			n++
		}
		z.elems, z.bytes = max(z.elems, 1+sz.elems), max(z.bytes, n+sz.bytes)
	}
	verifiedTrees.Lock()
	if len(verifiedTrees.m) >= maxVerifiedTrees {
		verifiedTrees.m = map[plumbing.Hash]treeSize{}
	}
	verifiedTrees.m[h] = z
	verifiedTrees.Unlock()
	return "", "", z
}

// tooMany is why a head holding more files than maxRemoteFiles is refused.
func tooMany() string {
	return fmt.Sprintf("more than %d files and folders in all, over strata's limit", maxRemoteFiles)
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

// DamagedError is a ref whose chain cannot be read to its end: the commit
// Object, reachable from Ref, is missing from the object store. It wraps
// state.ErrDamaged (never state.ErrNotFound: the history is there, broken,
// not empty).
type DamagedError struct {
	Ref    string
	Object string
}

func (e *DamagedError) Error() string {
	if e.Ref == "" { // a walk of more than one ref's history (a merge base, what a push sends)
		return "history damaged: commit " + e.Object + " is missing"
	}
	return e.Ref + ": history damaged: commit " + e.Object + " is missing"
}

func (e *DamagedError) Unwrap() error { return state.ErrDamaged }

// MissingBlobError is a recorded version whose bytes are gone: the tree of
// Commit names Blob at Path, and the object store does not hold it (a
// damaged or hand-pruned repository). It wraps state.ErrDamaged, never
// state.ErrNotFound: the path was recorded there, so "not recorded" would
// be a wrong answer, and a blame walking past it a wrong origin.
type MissingBlobError struct {
	Commit, Path, Blob string
}

func (e *MissingBlobError) Error() string {
	return fmt.Sprintf("%s at %s: history damaged: its blob %s is missing", e.Path, state.ShortID(e.Commit), e.Blob)
}

func (e *MissingBlobError) Unwrap() error { return state.ErrDamaged }

// NotCommitError is a strata ref, or a commit of its chain, that names an
// object there that is no commit: an annotated tag (git tag -a, then git
// update-ref), a tree or a blob. Nothing is missing, so it is no
// *DamagedError, and it wraps no sentinel (exit 3).
type NotCommitError struct {
	Ref    string
	Object string
	Type   string // tag, tree or blob
	Head   bool   // Ref names Object itself; else a commit of its chain does
}

func (e *NotCommitError) Error() string {
	if !e.Head {
		return fmt.Sprintf("%s: object %s of its history is a %s, not a commit", e.Ref, e.Object, e.Type)
	}
	return fmt.Sprintf("%s names a %s (%s), not a commit, as strata's refs do; %s", e.Ref, e.Type, e.Object, e.Fix())
}

// Fix is what to do about a ref naming no commit, as Error ends.
func (e *NotCommitError) Fix() string {
	if e.Type == "tag" {
		return "if the tag names a strata commit, git update-ref " + e.Ref + " " + e.Ref + "^{commit} points the ref at it"
	}
	return "point it at a strata commit (git reflog show " + e.Ref + " lists those it named)"
}

// damaged turns the failure to read commit c of ref's chain, whose head
// is head, into a *DamagedError when the object is missing, or a
// *NotCommitError when it is no commit; other errors (I/O) pass as they
// are.
func damaged(ref string, head, c plumbing.Hash, err error) error {
	var nc *notCommit
	if errors.As(err, &nc) {
		return &NotCommitError{Ref: ref, Object: c.String(), Type: nc.typ.String(), Head: c == head}
	}
	if errors.Is(err, state.ErrNotFound) {
		return &DamagedError{Ref: ref, Object: c.String()}
	}
	return err
}

// walkDamaged is damaged for a walk that follows commits' parents from
// more than one head (a merge base, the commits a push sends): a commit it
// reaches and cannot find is damage, said with no ref (attack36 M5: sync
// on a history a `git gc --prune=now` had cut ended with `strata: object
// ID`, exit 1, the code for invalid content).
func walkDamaged(c plumbing.Hash, err error) error {
	var m *missingObject
	if errors.As(err, &m) {
		return &DamagedError{Object: c.String()}
	}
	return err
}

// logErr prefixes a failure to read a ref's history with "log: ", except
// a *DamagedError and a *NotCommitError, which name the ref themselves,
// and a *BrokenRefError, which names its file.
func logErr(err error) error {
	var de *DamagedError
	var nc *NotCommitError
	var be *BrokenRefError
	if errors.As(err, &de) || errors.As(err, &nc) || errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("log: %w", err)
}

// fetchedTree reads the raw tree object h of a remote's history, fetching
// it where it is missing (a partial clone), within maxTreeObject bytes; why
// says what is wrong when it cannot be read as a tree, as a refusal puts it.
func (s *Store) fetchedTree(h plumbing.Hash) (raw []byte, why string) {
	return s.fetchedTreeInto(h, nil)
}

// fetchedTreeInto is fetchedTree reading into buf's storage when it fits
// (odb.DB.ReadLimitInto).
func (s *Store) fetchedTreeInto(h plumbing.Hash, buf []byte) (raw []byte, why string) {
	t, raw, err := s.objects.ReadLimitInto(h, maxTreeObject, buf)
	if s.fetched(h, err) {
		t, raw, err = s.objects.ReadLimitInto(h, maxTreeObject, buf)
	}
	var tl *odb.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Sprintf("a tree object of %d bytes, over %d", tl.Size, maxTreeObject)
	case err != nil:
		return nil, "unreadable tree: " + s.objectErr(err).Error()
	case t != plumbing.TreeObject:
		return nil, "a " + t.String() + " where a tree is expected"
	}
	return raw, ""
}
