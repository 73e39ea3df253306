package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

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
// (to, unless that move was killed before its rename). They are read from
// worktree-head, or, when it is missing, damaged or names commits this
// repository does not hold (a strata without it moved the ref last; a file
// planted or cut short), from the newest move of the ref's reflog that
// strata made, which every strata writes (attack39 H1: a missing file
// checked nothing, and the next record reverted the push). ok is false when
// neither says anything.
func (s *Store) Matched() (from, to string, ok bool) {
	old, nw, ok := s.fileMatched()
	if !ok || !s.knownCommit(old) || !s.knownCommit(nw) {
		if old, nw, ok = s.lastStrataMove(s.StateRef()); !ok || !s.knownCommit(old) || !s.knownCommit(nw) {
			return "", "", false
		}
	}
	return hashString(old), hashString(nw), true
}

// FileMatched reports whether worktree-head itself holds what Matched
// returns: false when it is missing or damaged and the reflog spoke
// (engine: it is written again once nothing is left to take).
func (s *Store) FileMatched() bool {
	old, nw, ok := s.fileMatched()
	from, to, known := s.Matched()
	return ok && known && hashString(old) == from && hashString(nw) == to
}

func (s *Store) knownCommit(h plumbing.Hash) bool {
	return h.IsZero() || s.HasCommit(h.String())
}

// matched is Matched for updateRef's check, under the ref's lock (s.mu may
// be held): worktree-head when it reads as two ids, else the reflog's
// newest move of strata's, neither checked against the object store.
func (s *Store) matched() (old, nw plumbing.Hash, ok bool) {
	if old, nw, ok = s.fileMatched(); ok {
		return old, nw, true
	}
	return s.lastStrataMove(s.StateRef())
}

// fileMatched reads worktree-head.
func (s *Store) fileMatched() (old, nw plumbing.Hash, ok bool) {
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
func (s *Store) noteMatched(ref string, old, nw plumbing.Hash) error {
	if !s.watchesMatched(ref) {
		return nil
	}
	if err := s.writeMatched([]byte(old.String() + " " + nw.String() + "\n")); err != nil {
		return fmt.Errorf("note %s's head: %w (strata keeps a one-line file there; the reflog's strata entries stand in for it meanwhile)", s.StateRef(), err)
	}
	return nil
}

// writeMatched writes line over worktree-head in place: no temp file and
// no rename, which on ext4 flushes the file's data like an fsync (the
// auto_da_alloc rule for a rename over a file): that made a record of one
// change 0.25 ms slower there, half its time. A write cut short by a crash
// or read half-done by another process reads as not two ids, and the
// reflog stands in (Matched). Never through a link, never waiting on a
// named pipe, never into anything but a regular file.
func (s *Store) writeMatched(line []byte) error {
	f, err := s.Shared().OpenFile(s.matchedFile(), os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New(state.NotRegular(st.Mode()))
	}
	if _, err := f.WriteAt(line, 0); err != nil {
		return err
	}
	if st.Size() != int64(len(line)) {
		return f.Truncate(int64(len(line)))
	}
	return nil
}

// MarkMatched notes, under the state ref's lock, that the work tree's files
// are now those of head (engine: an outside move taken), whatever the ref
// holds meanwhile: a push that landed since is judged from head on. When
// the ref is still at head, the reflog gets a move of strata's from head
// to itself too, which Matched reads when worktree-head cannot be written
// or read; when it is not and worktree-head cannot be written, the error
// says so.
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
	err = s.noteMatched(ref, h, h)
	if cur, _, rerr := s.readLocked(ref); rerr == nil && cur == h {
		s.logRef(ref, h, h)
		return nil
	}
	return err
}

// PushedIn names, as an UnsafeTreeError's remote, a push into this
// repository (CheckPushed): its message then says nothing of a sync.
const PushedIn = "\x00pushed"

// CheckPushed checks a move of the state ref from outside strata from from
// to to ("" for none) as a sync checks a fetched head before it merges
// anything: the head's tree (names, modes, depth, size) and the trailers of
// every commit to reaches and from does not (an *UnsafeTreeError).
func (s *Store) CheckPushed(from, to string) error {
	var f, t plumbing.Hash
	if from != "" {
		f = plumbing.NewHash(from)
	}
	t = plumbing.NewHash(to)
	if err := s.checkFetched(PushedIn, t); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.checkNewFrom(PushedIn, f, t)
	return err
}

// PutBack moves the state ref from to back to the head the work tree's
// files follow (to; "" deletes nothing: the ref is made again at to) under
// its lock, when it is still at from: a move from outside strata that is
// no fast-forward (a forced push, a rewind or deletion by hand) or brings
// a history a sync would refuse. moved is false when the ref is elsewhere
// now (another push landed): the caller looks again. The move is logged
// as strata's and noted (worktree-head).
func (s *Store) PutBack(from, to string) (moved bool, err error) {
	var f, t plumbing.Hash
	if from != "" {
		f = plumbing.NewHash(from)
	}
	if to == "" {
		return false, fmt.Errorf("put %s back: no head to put back", s.StateRef())
	}
	t = plumbing.NewHash(to)
	ref := s.StateRef()
	lock, err := s.lockRef(ref)
	if err != nil {
		return false, err
	}
	cur, _, err := s.readLocked(ref)
	if err != nil || cur != f {
		lock.release()
		return false, err
	}
	if err := s.makeRoom(ref); err != nil {
		lock.release()
		return false, err
	}
	if !lock.mine() {
		lock.f.Close()
		return false, nil
	}
	s.noteMatched(ref, t, t)
	s.logRef(ref, f, t)
	if err := lock.commit(ref, t); err != nil {
		if errors.Is(err, errLockLost) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// ReceivedPushes reports whether the state ref's reflog holds a move that
// was not strata's (a push into this repository: it serves as another
// machine's sync remote), so its history may be on that machine too.
func (s *Store) ReceivedPushes() bool {
	data, err := state.ReadRegular(s.logFile(s.StateRef()), maxLogRead, false)
	if err != nil {
		return false
	}
	for line := range bytes.Lines(data) {
		if _, _, ok := reflogMove(line); ok && !bytes.HasSuffix(bytes.TrimRight(line, "\n"), []byte("\tstrata")) {
			return true
		}
	}
	return false
}

// maxLogRead bounds the state ref's reflog read whole (about 150 bytes an
// entry: 400 000 moves).
const maxLogRead = 64 << 20

// lastStrataMove is the newest move of ref's reflog that strata made (its
// message "strata"): the heads it went from and to. ok is false when there
// is no reflog, or no such move in it.
func (s *Store) lastStrataMove(ref string) (old, nw plumbing.Hash, ok bool) {
	data, err := state.ReadRegular(s.logFile(ref), maxLogRead, false)
	if err != nil {
		return old, nw, false
	}
	data = bytes.TrimRight(data, "\n")
	for len(data) > 0 {
		i := bytes.LastIndexByte(data, '\n')
		line := data[i+1:]
		data = data[:max(i, 0)]
		if !bytes.HasSuffix(line, []byte("\tstrata")) {
			continue
		}
		if old, nw, ok = reflogMove(line); ok {
			return old, nw, true
		}
	}
	return old, nw, false
}

// FileHolds reports whether worktree-head, read as it is, names head as
// one of the two heads of strata's last move: the cheap look a record
// makes before anything else (engine.outsideMove).
func (s *Store) FileHolds(head string) bool {
	old, nw, ok := s.fileMatched()
	return ok && (hashString(old) == head || hashString(nw) == head)
}

// MatchedFileProblem says what is wrong with worktree-head when something
// is there that Matched cannot use ("" when it is fine or absent): strata
// then reads the reflog instead, and writes the file again at its next move
// unless a folder stands in the way.
func (s *Store) MatchedFileProblem() string {
	st, err := os.Lstat(s.matchedFile())
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ""
	case err != nil:
		return err.Error()
	case !st.Mode().IsRegular():
		return state.NotRegular(st.Mode())
	}
	old, nw, ok := s.fileMatched()
	switch {
	case !ok:
		return "not two commit ids on one line"
	case !s.knownCommit(old) || !s.knownCommit(nw):
		return "names a commit this repository does not hold"
	}
	return ""
}
