package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// ErrNothingLeft is returned by Forget when every commit of the state ref
// would go: none records anything but the forgotten paths and no remote
// holds one of them.
var ErrNothingLeft = errors.New("forgetting it would leave the state ref no commit")

// ErrUnderFile is returned by Forget for a path below one the state ref
// records as a file (FILE/x): no version of it can be recorded.
var ErrUnderFile = errors.New("is recorded as a file, not a folder")

// Forgotten is what Forget did (or, dry, would do).
type Forgotten struct {
	Old       string   `json:"old"`       // the state ref's head before
	New       string   `json:"new"`       // and after ("" when unchanged, or dry)
	Rewritten []string `json:"rewritten"` // the commits rewritten, oldest first (old ids)
	Dropped   []string `json:"dropped"`   // the commits dropped: they recorded nothing but the forgotten paths
	Kept      int      `json:"unchanged"` // unpublished commits left as they were
	// Stale names the remotes that could not be fetched first ("NAME:
	// why"): their tracking refs count as last fetched.
	Stale []string `json:"stale,omitempty"`
	// Mapped maps each rewritten or dropped commit (full ids) to the commit
	// that now stands for it ("" for a dropped root), for the caches that
	// name commits (the kept sync losses).
	Mapped map[string]string `json:"-"`
}

// Forget rewrites the commits of the state ref that no tracking ref
// (refs/strata-remotes/...) reaches — the history no remote has been seen
// to hold — so that none of them brings a version of paths: in each such
// commit a forgotten path holds the version its parent holds (for a merge
// with a published parent, the last published parent's; for a commit with
// no parent, none), its trailer blocks and body lines are removed, and a
// commit that recorded nothing else is dropped. Published commits are never
// changed, so a later push publishes of these paths only versions a remote
// already holds. Everything else of a rewritten commit (author, committer,
// times, the other paths, the message) is kept byte for byte.
//
// The ref moves by compare-and-swap: when another writer moved it meanwhile
// the rewrite is made again on the new head. With dry set nothing is
// written. It returns state.ErrUnchanged when no unpublished commit holds a
// version of paths other than its parent's.
//
// With tracking set, only those tracking refs count as published (a
// remote's: what that remote is known to hold), so commits that reached
// another remote only (one since removed, a backup) are rewritten too.
func (s *Store) Forget(ctx context.Context, paths []string, dry bool, tracking ...string) (Forgotten, error) {
	for _, p := range paths {
		if err := ValidPath(p); err != nil {
			return Forgotten{}, fmt.Errorf("forget: %w", err)
		}
	}
	args := []string{"for-each-ref", "--format=%(objectname)", TrackingPrefix}
	if len(tracking) > 0 {
		args = append(args[:2], tracking...)
	}
	published, err := s.git(ctx, nil, args...)
	if err != nil {
		return Forgotten{}, fmt.Errorf("forget: %w", err)
	}
	var res Forgotten
	build := func(head plumbing.Hash) (plumbing.Hash, error) {
		res = Forgotten{Old: head.String(), Rewritten: []string{}, Dropped: []string{}}
		if head.IsZero() {
			return plumbing.ZeroHash, state.ErrUnchanged
		}
		args := []string{"rev-list", "--topo-order", "--reverse", head.String()}
		for _, h := range strings.Fields(published) {
			args = append(args, "^"+h)
		}
		out, err := s.git(ctx, nil, append(args, "--")...)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("forget: rev-list: %w", err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.checkUnderFile(head, paths); err != nil {
			return plumbing.ZeroHash, err
		}
		s.objects.Begin() // the new trees and commits, written together (a pack when many) or not at all
		next, err := s.forget(strings.Fields(out), paths, &res)
		if err == nil && next == head {
			err = state.ErrUnchanged
		}
		if err != nil || dry {
			s.objects.Abort()
			return next, err
		}
		if err := s.objects.Flush(PackMin, Fsync); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("forget: %w", err)
		}
		return next, nil
	}
	if dry {
		head, err := s.readRef(s.StateRef())
		if errors.Is(err, state.ErrNotFound) {
			err = nil
		}
		if err != nil {
			return res, err
		}
		if _, err = build(head); err != nil {
			return res, err
		}
		return res, nil
	}
	next, err := s.updateRef(s.StateRef(), build)
	if err == nil {
		res.New = next.String()
	}
	return res, err
}

// forget rewrites the unpublished commits (oldest first, parents before
// children) and returns the new head. Callers hold s.mu.
func (s *Store) forget(unpublished []string, paths []string, res *Forgotten) (plumbing.Hash, error) {
	gone := map[string]bool{}
	for _, p := range paths {
		gone[p] = true
	}
	mapped := map[plumbing.Hash]plumbing.Hash{} // unpublished commit → itself, its rewrite, or (dropped) what it maps to; zero: no commit
	trees := map[plumbing.Hash]plumbing.Hash{}  // a commit's tree, rewritten or not
	treeOf := func(c plumbing.Hash) (plumbing.Hash, error) {
		if t, ok := trees[c]; ok {
			return t, nil
		}
		return s.commitTree(c)
	}
	var last plumbing.Hash
	for _, line := range unpublished {
		if !plumbing.IsHash(line) {
			return plumbing.ZeroHash, fmt.Errorf("forget: rev-list: unexpected line %q", line)
		}
		c := plumbing.NewHash(line)
		_, raw, err := s.readObject(c)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		ci, err := s.readCommit(c)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		// The parents: unpublished ones replaced by their rewrite (a
		// dropped one by what it maps to), repeats left out. Each
		// forgotten path is taken from the last published parent, else
		// from the first parent's rewrite.
		var parents []plumbing.Hash
		var from, firstNew plumbing.Hash
		published := false
		for i, p := range ci.parents {
			np, unpub := mapped[p]
			if !unpub {
				np, from, published = p, p, true
			}
			if i == 0 {
				firstNew = np
			}
			if !np.IsZero() && !slices.Contains(parents, np) {
				parents = append(parents, np)
			}
		}
		if !published {
			from = firstNew
		}
		var ops []treeOp
		for _, p := range paths {
			op := treeOp{parts: strings.Split(p, "/"), del: true}
			if !from.IsZero() {
				ft, err := treeOf(from)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				te, err := s.lookup(ft, p)
				if err == nil && !te.IsDir() {
					op = treeOp{parts: op.parts, blob: te.Hash}
				} else if err != nil && !errors.Is(err, state.ErrNotFound) {
					return plumbing.ZeroHash, err
				}
			}
			ops = append(ops, op)
		}
		tree, _, err := s.updateTree(ci.tree, ops)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("forget: commit %s: %w", c, err)
		}
		msg, named, others := forgetMessage(ci.message, gone)
		if len(parents) > 1 {
			// a merge takes a forgotten path from its last published
			// parent, which its first may not hold: its trailers say so,
			// as every commit's say what it changes from its first parent
			pt, err := treeOf(parents[0])
			if err != nil {
				return plumbing.ZeroHash, err
			}
			var ps []pending
			for _, p := range paths {
				if pd, ok, err := s.changeFrom(pt, tree, p, ci.message); err != nil {
					return plumbing.ZeroHash, err
				} else if ok {
					ps = append(ps, pd)
				}
			}
			msg = addBlocks(msg, ps)
		}
		// A commit that recorded nothing but forgotten paths, and now
		// changes nothing, goes.
		if len(parents) <= 1 && named && !others {
			var pt plumbing.Hash
			if len(parents) == 1 {
				if pt, err = treeOf(parents[0]); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			if tree == pt || pt.IsZero() && len(parents) == 0 && isEmptyTree(tree) {
				var to plumbing.Hash
				if len(parents) == 1 {
					to = parents[0]
				}
				mapped[c], last = to, to
				res.Dropped = append(res.Dropped, c.String())
				continue
			}
		}
		if tree == ci.tree && msg == ci.message && slices.Equal(parents, ci.parents) {
			mapped[c], trees[c], last = c, tree, c
			res.Kept++
			continue
		}
		nc, err := s.writeObject(plumbing.CommitObject, rewriteCommit(raw, tree, parents, msg))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		mapped[c], trees[nc], last = nc, tree, nc
		res.Rewritten = append(res.Rewritten, c.String())
	}
	res.Mapped = map[string]string{}
	for c, n := range mapped {
		if c != n {
			res.Mapped[c.String()] = ""
			if !n.IsZero() {
				res.Mapped[c.String()] = n.String()
			}
		}
	}
	if len(unpublished) == 0 {
		return plumbing.NewHash(res.Old), nil
	}
	if last.IsZero() {
		return plumbing.ZeroHash, ErrNothingLeft
	}
	return last, nil
}

// checkUnderFile refuses a path below one head records as a file.
// Callers hold s.mu.
func (s *Store) checkUnderFile(head plumbing.Hash, paths []string) error {
	tree, err := s.commitTree(head)
	if err != nil {
		return err
	}
	for _, p := range paths {
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			if te, err := s.lookup(tree, dir); err == nil && !te.IsDir() {
				return fmt.Errorf("forget %s: %s %w", p, dir, ErrUnderFile)
			}
		}
	}
	return nil
}

func isEmptyTree(h plumbing.Hash) bool {
	return h.IsZero() || h == plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
}

// forgetMessage returns msg without the trailer blocks of the paths in gone
// (a block: its Strata-Path line and the block keys after it) and, in the
// body of a commit of several files, without their "<action> <path>" lines.
// named reports whether a block was removed, others whether a block of
// another path is left.
func forgetMessage(msg string, gone map[string]bool) (out string, named, others bool) {
	body, trailers := "", msg
	if i := strings.LastIndex(strings.TrimRight(msg, "\n"), "\n\n"); i >= 0 {
		body, trailers = msg[:i+2], msg[i+2:]
	}
	var kept []string
	skipping := false
	for _, line := range strings.SplitAfter(trailers, "\n") {
		key, val, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		switch key {
		case trailerPath:
			skipping = gone[unquotePath(val)]
			named = named || skipping
			others = others || !skipping
		case trailerAction, trailerClass, trailerSource, trailerSchema, trailerSession, trailerToolUse, trailerHead:
		default:
			skipping = false
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	if !named {
		return msg, false, others
	}
	// A commit of several files: "record N files", a blank line, one
	// "<action> <path>" line each, a blank line. Its forgotten lines go,
	// and with one line left it reads as a one-file commit (recordMessage).
	subject, rest, _ := strings.Cut(body, "\n")
	if n, ok := strings.CutPrefix(subject, "record "); ok && strings.HasSuffix(n, " files") && strings.HasPrefix(rest, "\n") {
		var lines []string
		for _, line := range strings.Split(strings.Trim(rest, "\n"), "\n") {
			action, p, _ := strings.Cut(line, " ")
			if !(action == "add" || action == "update" || action == "delete") || !gone[unquotePath(p)] {
				lines = append(lines, line)
			}
		}
		switch len(lines) {
		case 0: // dropped by the caller
		case 1:
			body = lines[0] + "\n\n"
		default:
			body = "record " + strconv.Itoa(len(lines)) + " files\n\n" + strings.Join(lines, "\n") + "\n\n"
		}
	}
	return body + strings.Join(kept, ""), named, others
}

// rewriteCommit returns raw commit object raw with tree, parents and
// message replaced; every other header is kept as it was.
func rewriteCommit(raw []byte, tree plumbing.Hash, parents []plumbing.Hash, msg string) []byte {
	var b bytes.Buffer
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	for len(raw) > 0 {
		line, rest, _ := bytes.Cut(raw, []byte{'\n'})
		raw = rest
		if len(line) == 0 {
			break
		}
		if bytes.HasPrefix(line, []byte("tree ")) || bytes.HasPrefix(line, []byte("parent ")) {
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(msg)
	return b.Bytes()
}

// changeFrom returns the change of path p from tree from to tree to, as a
// trailer block of source sync (the class and schema of msg's own block
// for p, when it has one); ok is false when p is the same in both.
// Callers hold s.mu.
func (s *Store) changeFrom(from, to plumbing.Hash, p, msg string) (pd pending, ok bool, err error) {
	version := func(root plumbing.Hash) (plumbing.Hash, error) {
		te, err := s.lookup(root, p)
		switch {
		case errors.Is(err, state.ErrNotFound) || err == nil && te.IsDir():
			return plumbing.ZeroHash, nil
		case err != nil:
			return plumbing.ZeroHash, err
		}
		return te.Hash, nil
	}
	was, err := version(from)
	if err != nil {
		return pd, false, err
	}
	now, err := version(to)
	if err != nil || was == now {
		return pd, false, err
	}
	pd = pending{ch: state.Change{Path: p, Source: state.SourceSync}, blob: now, action: state.ActionUpdate}
	switch {
	case was.IsZero():
		pd.action = state.ActionAdd
	case now.IsZero():
		pd.action, pd.ch.Deleted = state.ActionDelete, true
	}
	for _, e := range parseTrailers(msg) {
		if e.Path == p {
			pd.ch.Class, pd.ch.Schema = e.Class, e.Schema
		}
	}
	return pd, true, nil
}

// addBlocks adds trailer blocks for ps to msg, before its Strata-Time
// trailer; in a message without one, at the end of its last paragraph when
// that holds blocks, else as a new last paragraph.
func addBlocks(msg string, ps []pending) string {
	if len(ps) == 0 {
		return msg
	}
	var b strings.Builder
	writeTrailers(&b, ps)
	i := strings.LastIndex(msg, "\n"+trailerTime+": ")
	if i < 0 { // not written by strata: after its blocks, else as the last paragraph
		msg = strings.TrimRight(msg, "\n") + "\n"
		if last := msg[strings.LastIndex("\n"+strings.TrimSuffix(msg, "\n"), "\n\n")+1:]; !strings.Contains("\n"+last, "\n"+trailerPath+": ") {
			msg += "\n"
		}
		return msg + b.String()
	}
	return msg[:i+1] + b.String() + msg[i+1:]
}
