package gitstore

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/state"
)

// The work tree's files are what strata last wrote or recorded there: the
// state ref's head as strata itself last moved it. Anything else can move
// the ref too: above all a push into this repository when it serves as
// another machine's sync remote while strata keeps its work tree (git
// receive-pack takes the ref's lock, never strata's write-phase lock), or a
// `git update-ref` by hand. Such a move leaves the files at the version the
// ref moved from, and a record built on the new head took each file the move
// changed for the user's edit back, reverting the pushed work on every
// machine (attack38e). So strata keeps, beside the journal, the heads its own
// last move of the state ref went from and to (strata/worktree-head, written
// under the ref's lock right before the rename), and never moves the ref
// from any other head: updateRef refuses with an *OutsideMoveError, and the
// engine first takes the outside move into the work tree (engine/pushed.go)
// and marks it taken (MarkMatched). Two heads, since a move killed before
// its rename leaves the file naming the new head while the ref still holds
// the old one. No file (a repository strata never moved a ref in since this
// was added, or a file that cannot be read) checks nothing: the behaviour
// before, named in the guide.

// OutsideMoveError is updateRef refusing to move the work tree's state ref
// from a head strata did not leave it at: something else moved it since
// (Head), while the files are still those of Matched.
type OutsideMoveError struct {
	Ref     string
	Head    string // where the ref is ("" when something deleted it)
	Matched string // the head strata last moved it to
}

func (e *OutsideMoveError) Error() string {
	head := e.Head
	if head == "" {
		head = "nothing (deleted)"
	}
	return fmt.Sprintf("%s was moved from outside strata (a push into this repository, or git update-ref) from %s to %s, and the files here are not written for it yet", e.Ref, state.ShortID(e.Matched), state.ShortID(head))
}

// matchedFile is where the state ref's last move by strata is kept.
func (s *Store) matchedFile() string {
	return filepath.Join(s.gitDir, "strata", "worktree-head")
}

// watchesMatched reports whether ref is the one whose head the work tree's
// files follow: the state ref, not the home view's (prefixed), the rejected
// or the rules ref.
func (s *Store) watchesMatched(ref string) bool {
	return s.prefix == "" && ref == s.StateRef()
}

// Matched returns the heads strata's own last move of the state ref went
// from and to ("" for none): the work tree's files are those of one of them
// (to, unless that move was killed before its rename). ok is false when
// nothing is known.
func (s *Store) Matched() (from, to string, ok bool) {
	old, nw, ok := s.matched()
	return hashString(old), hashString(nw), ok
}

func (s *Store) matched() (old, nw plumbing.Hash, ok bool) {
	data, err := state.ReadRegular(s.matchedFile(), 256, false)
	if err != nil {
		return old, nw, false
	}
	o, n, found := bytes.Cut(bytes.TrimSuffix(data, []byte("\n")), []byte(" "))
	if !found || len(o) != 40 || len(n) != 40 || !plumbing.IsHash(string(o)) || !plumbing.IsHash(string(n)) {
		return old, nw, false
	}
	return plumbing.NewHash(string(o)), plumbing.NewHash(string(n)), true
}

// checkMatched is updateRef's check, under ref's lock with cur read there:
// an *OutsideMoveError when cur is neither head of strata's last move.
func (s *Store) checkMatched(ref string, cur plumbing.Hash) error {
	if !s.watchesMatched(ref) {
		return nil
	}
	old, nw, ok := s.matched()
	if !ok || cur == old || cur == nw {
		return nil
	}
	return &OutsideMoveError{Ref: ref, Head: hashString(cur), Matched: hashString(nw)}
}

// noteMatched keeps a move of ref by strata from old to nw, under its lock,
// before the rename. Best effort, unsynced: a lost or torn file is read as
// nothing known, or as a move from outside to a head the files already
// hold, which the engine's catch-up finds has nothing to write.
func (s *Store) noteMatched(ref string, old, nw plumbing.Hash) {
	if !s.watchesMatched(ref) {
		return
	}
	atomicfile.WriteUnsynced(s.matchedFile(), []byte(old.String()+" "+nw.String()+"\n"), s.Shared().FixFile)
}

// MarkMatched notes, under the state ref's lock, that the work tree's files
// are now those of head (engine: an outside move taken), whatever the ref
// holds meanwhile: a push that landed since is judged from head on.
func (s *Store) MarkMatched(head string) error {
	var h plumbing.Hash
	if head != "" {
		if !plumbing.IsHash(head) {
			return fmt.Errorf("mark %s: not a commit id: %q", s.StateRef(), head)
		}
		h = plumbing.NewHash(head)
	}
	ref := s.StateRef()
	lock, err := s.lockRef(ref)
	if err != nil {
		return err
	}
	defer lock.release()
	s.noteMatched(ref, h, h)
	return nil
}
