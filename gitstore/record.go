package gitstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// identity is the author and committer of every commit strata writes.
const identity = "strata <strata@localhost>"

// ValidPath reports whether p can be recorded: it passes state.CheckPath,
// so that the trees strata writes pass `git fsck --strict`.
func ValidPath(p string) error {
	if err := state.CheckPath(p); err != nil {
		return fmt.Errorf("%q: %w", p, err)
	}
	return nil
}

// pending is one change ready to go into a tree.
type pending struct {
	ch     state.Change
	blob   plumbing.Hash
	action state.Action
}

// Record writes one commit on StateRef holding all the given changes. The
// commit's tree is a full snapshot: the previous head's tree with each
// change's path replaced, or removed when the change is a deletion. Changes
// that change nothing (the same content as the head, or the deletion of an
// absent path) are dropped; when nothing is left Record returns
// state.ErrUnchanged, so recording the same version twice is idempotent.
// When the same path appears more than once, the last change wins.
//
// The ref moves by compare-and-swap under git's lock; if another writer got
// there first the commit is rebuilt on the new head. Record returns an error
// wrapping state.ErrLocked when the ref stays locked for LockTimeout. It
// returns the log entries of the new commit, in the order of its trailers.
func (s *Store) Record(changes ...state.Change) ([]state.Entry, error) {
	if len(changes) == 0 {
		return nil, state.ErrUnchanged
	}
	// Last change per path wins; keep the first occurrence's position.
	order := make([]string, 0, len(changes))
	byPath := make(map[string]state.Change, len(changes))
	for _, ch := range changes {
		if err := ValidPath(ch.Path); err != nil {
			return nil, err
		}
		if _, ok := byPath[ch.Path]; !ok {
			order = append(order, ch.Path)
		}
		byPath[ch.Path] = ch
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	// Hash the contents once; only the blobs that change the snapshot are
	// written (an unchanged file may be packed already).
	blobs := make(map[string]plumbing.Hash, len(order))
	for _, p := range order {
		if ch := byPath[p]; !ch.Deleted {
			blobs[p] = plumbing.ComputeHash(plumbing.BlobObject, ch.Content)
		}
	}

	ref := s.StateRef()
	var recorded []pending
	var when time.Time
	head, err := s.updateRef(ref, func(parent plumbing.Hash) (plumbing.Hash, error) {
		var root plumbing.Hash
		var err error
		if !parent.IsZero() {
			if root, err = s.commitTree(parent); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("head: %w", err)
			}
		}
		recorded, err = s.classify(recorded[:0], root, order, byPath, blobs)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if len(recorded) == 0 {
			return plumbing.ZeroHash, state.ErrUnchanged
		}
		for _, pd := range recorded {
			if pd.action == state.ActionDelete {
				continue
			}
			if err := s.storeObject(plumbing.BlobObject, pd.ch.Content, pd.blob); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("%s: %w", pd.ch.Path, err)
			}
		}
		newRoot, err := s.applyChanges(root, recorded)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		exact := latestExact(recorded)
		when = exact.Truncate(time.Second)
		msg := recordMessage(recorded, exact)
		return s.writeCommit(newRoot, parent, when, msg)
	})
	if err != nil {
		return nil, err
	}
	s.countRecords(1)
	return entries(head, when, recorded), nil
}

// Rejection is one invalid version for RejectEach: the change, and the
// problem lines its commit message lists.
type Rejection struct {
	Change   state.Change
	Problems []string
}

// RejectEach records rejected versions on RejectedRef, one commit each, in
// order: a commit's tree is the state head's tree with its own change
// applied, its parent the previous rejected commit, and its message
// "reject <path>", the problem lines and the trailers. Every version writes
// a commit (rejections are events, not states). As in RecordEach, their
// objects are written together (one pack for a large batch, its trees as
// deltas) and the ref moves once; when it fails no commit of the batch is
// on the ref, and the error wraps state.ErrLocked when the ref stays
// locked. A first record of a repository whose 1 000 files follow no
// schema made 1 000 rejections of 45 KB trees, loose and compressed whole,
// one ref update each.
func (s *Store) RejectEach(rs []Rejection) ([]state.Entry, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	for _, r := range rs {
		if err := ValidPath(r.Change.Path); err != nil {
			return nil, fmt.Errorf("reject: %w", err)
		}
	}
	base, err := s.readRef(s.StateRef())
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("reject: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var root plumbing.Hash
	if !base.IsZero() {
		if root, err = s.commitTree(base); err != nil {
			return nil, fmt.Errorf("reject: state head: %w", err)
		}
	}
	out := make([]state.Entry, len(rs))
	_, err = s.updateRef(s.RejectedRef(), func(parent plumbing.Hash) (_ plumbing.Hash, err error) {
		s.objects.Begin()
		defer func() {
			if err != nil {
				s.objects.Abort()
			}
		}()
		cur := parent
		for i, r := range rs {
			if cur, out[i], err = s.rejectCommit(root, cur, r); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		if err := s.objects.Flush(PackMin, Fsync); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("reject: %w", err)
		}
		return cur, nil
	})
	if err != nil {
		return nil, err
	}
	s.countRecords(len(rs))
	return out, nil
}

// rejectCommit writes the objects and the commit of one rejection on the
// state tree root, with parent as its parent. Callers hold s.mu.
func (s *Store) rejectCommit(root, parent plumbing.Hash, r Rejection) (plumbing.Hash, state.Entry, error) {
	ch := r.Change
	pd := pending{ch: ch, action: state.ActionDelete}
	old, lerr := s.lookup(root, ch.Path)
	exists := lerr == nil && !old.IsDir()
	if !ch.Deleted {
		var err error
		if pd.blob, err = s.writeObject(plumbing.BlobObject, ch.Content); err != nil {
			return plumbing.ZeroHash, state.Entry{}, fmt.Errorf("reject %s: %w", ch.Path, err)
		}
		pd.action = state.ActionAdd
		if exists {
			pd.action = state.ActionUpdate
		}
	}
	list := []pending{pd}
	if ch.Deleted && !exists {
		list = nil // nothing to remove from the snapshot; still record the rejection
	}
	newRoot, err := s.applyChanges(root, list)
	if err != nil {
		return plumbing.ZeroHash, state.Entry{}, fmt.Errorf("reject: %w", err)
	}
	exact := latestExact([]pending{pd})
	when := exact.Truncate(time.Second)
	var b strings.Builder
	b.WriteString("reject " + quotePath(ch.Path) + "\n\n")
	for _, p := range r.Problems {
		for _, line := range strings.Split(p, "\n") {
			if strings.TrimSpace(line) != "" {
				b.WriteString(line + "\n")
			}
		}
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n")
	}
	writeTrailers(&b, []pending{pd})
	writeTime(&b, exact)
	c, err := s.writeCommit(newRoot, parent, when, b.String())
	if err != nil {
		return plumbing.ZeroHash, state.Entry{}, err
	}
	return c, entries(c, when, []pending{pd})[0], nil
}

// classify appends to recorded the changes of order (by path in byPath,
// content hashes in blobs) that change the snapshot of tree root, each with
// its action. Callers hold s.mu.
func (s *Store) classify(recorded []pending, root plumbing.Hash, order []string, byPath map[string]state.Change, blobs map[string]plumbing.Hash) ([]pending, error) {
	for _, p := range order {
		ch := byPath[p]
		old, err := s.lookup(root, p)
		exists := err == nil && !old.IsDir()
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, fmt.Errorf("record %s: %w", p, err)
		}
		pd := pending{ch: ch, blob: blobs[p]}
		switch {
		case ch.Deleted && !exists:
			continue
		case ch.Deleted:
			pd.action = state.ActionDelete
		case exists && old.Hash == pd.blob:
			continue
		case exists:
			pd.action = state.ActionUpdate
		default:
			pd.action = state.ActionAdd
		}
		recorded = append(recorded, pd)
	}
	return recorded, nil
}

// latestExact returns the latest change time (now when none is set); the
// commit time is it truncated to the second precision of a git commit, the
// Strata-Time trailer keeps it whole.
func latestExact(ps []pending) time.Time {
	var t time.Time
	for _, p := range ps {
		if p.ch.Time.After(t) {
			t = p.ch.Time
		}
	}
	if t.IsZero() {
		t = now()
	}
	return t
}

func entries(commit plumbing.Hash, when time.Time, ps []pending) []state.Entry {
	out := make([]state.Entry, len(ps))
	for i, p := range ps {
		out[i] = state.Entry{
			Commit: commit.String(),
			Time:   when,
			Path:   p.ch.Path,
			Action: p.action,
			Source: p.ch.Source,
			Class:  p.ch.Class,
			Schema: p.ch.Schema,
			AtHead: p.ch.AtHead,
		}
	}
	return out
}

// recordMessage builds a commit message: "<action> <path>" for one change,
// "record N files" and a body of "<action> <path>" lines for several, then
// one trailer block per change.
func recordMessage(ps []pending, exact time.Time) string {
	var b strings.Builder
	if len(ps) == 1 {
		b.WriteString(string(ps[0].action) + " " + quotePath(ps[0].ch.Path) + "\n\n")
	} else {
		b.WriteString("record " + strconv.Itoa(len(ps)) + " files\n\n")
		for _, p := range ps {
			b.WriteString(string(p.action) + " " + quotePath(p.ch.Path) + "\n")
		}
		b.WriteString("\n")
	}
	writeTrailers(&b, ps)
	writeTime(&b, exact)
	return b.String()
}

// writeCommit writes a commit object with the strata identity and returns
// its hash. Callers hold s.mu.
func (s *Store) writeCommit(tree, parent plumbing.Hash, when time.Time, msg string) (plumbing.Hash, error) {
	var b strings.Builder
	b.Grow(len(msg) + 256)
	b.WriteString("tree " + tree.String() + "\n")
	if !parent.IsZero() {
		b.WriteString("parent " + parent.String() + "\n")
	}
	sig := identity + " " + strconv.FormatInt(when.Unix(), 10) + " " + when.Format("-0700") + "\n"
	b.WriteString("author " + sig)
	b.WriteString("committer " + sig)
	b.WriteString("\n")
	b.WriteString(msg)
	h, err := s.writeObject(plumbing.CommitObject, []byte(b.String()))
	if err != nil {
		return h, err
	}
	s.commits[h] = tree
	return h, nil
}

// applyChanges returns the hash of root with every pending change applied,
// writing each new tree. Subtrees no change touches keep their hashes and are
// neither read nor written. Callers hold s.mu.
func (s *Store) applyChanges(root plumbing.Hash, ps []pending) (plumbing.Hash, error) {
	ops := make([]treeOp, len(ps))
	for i, p := range ps {
		ops[i] = treeOp{parts: strings.Split(p.ch.Path, "/"), blob: p.blob, del: p.action == state.ActionDelete}
	}
	h, _, err := s.updateTree(root, ops)
	return h, err
}

type treeOp struct {
	parts []string
	blob  plumbing.Hash
	del   bool
}

// updateTree applies ops (paths relative to this tree) to tree h and
// returns the new hash and whether the result is empty.
func (s *Store) updateTree(h plumbing.Hash, ops []treeOp) (plumbing.Hash, bool, error) {
	old, err := s.tree(h)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	entries := make([]treeEntry, len(old), len(old)+len(ops))
	copy(entries, old)
	changed := false

	// Group the deeper ops by their first element, in order of appearance.
	var dirs []string
	sub := map[string][]treeOp{}
	for _, op := range ops {
		name := op.parts[0]
		if len(op.parts) > 1 {
			if _, ok := sub[name]; !ok {
				dirs = append(dirs, name)
			}
			sub[name] = append(sub[name], treeOp{parts: op.parts[1:], blob: op.blob, del: op.del})
			continue
		}
		i, ok := odb.Find(entries, name)
		if ok && entries[i].IsDir() {
			if op.del {
				continue // a directory is not the file being deleted
			}
			return plumbing.ZeroHash, false, fmt.Errorf("%s: is a directory in the snapshot", name)
		}
		switch {
		case op.del && ok:
			entries = append(entries[:i], entries[i+1:]...)
			changed = true
		case op.del:
		case ok:
			if entries[i].Hash != op.blob {
				entries[i].Hash = op.blob
				entries[i].Mode = filemode.Regular
				changed = true
			}
		default:
			entries = append(entries, treeEntry{Name: name, Mode: filemode.Regular, Hash: op.blob})
			changed = true
		}
	}
	for _, name := range dirs {
		i, ok := odb.Find(entries, name)
		var subHash plumbing.Hash
		if ok {
			if !entries[i].IsDir() {
				return plumbing.ZeroHash, false, fmt.Errorf("%s: is a file in the snapshot", name)
			}
			subHash = entries[i].Hash
		}
		nh, empty, err := s.updateTree(subHash, sub[name])
		if err != nil {
			return plumbing.ZeroHash, false, fmt.Errorf("%s/%w", name, err)
		}
		switch {
		case empty && ok:
			entries = append(entries[:i], entries[i+1:]...)
			changed = true
		case empty:
		case ok:
			if entries[i].Hash != nh {
				entries[i].Hash = nh
				changed = true
			}
		default:
			entries = append(entries, treeEntry{Name: name, Mode: filemode.Dir, Hash: nh})
			changed = true
		}
	}
	if !changed && !h.IsZero() {
		return h, len(entries) == 0, nil
	}
	if len(entries) == 0 {
		// The root of an empty snapshot still needs its (empty) tree object.
		nh, err := s.writeObject(plumbing.TreeObject, nil)
		return nh, true, err
	}
	nh, err := s.writeObject(plumbing.TreeObject, odb.EncodeTree(entries))
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	s.cacheTree(nh, entries)
	return nh, false, nil
}
