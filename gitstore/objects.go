package gitstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// treeEntry is one entry of a decoded tree.
type treeEntry = odb.Entry

// readObject returns an object's type and content, or an error wrapping
// state.ErrNotFound when the object directory (with its alternates) does not
// hold it: odb rescans the packs once on a miss, so an object an outside
// `git gc` packed meanwhile is found. Callers hold s.mu.
func (s *Store) readObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	t, data, err := s.objects.Read(h)
	if s.fetched(h, err) {
		t, data, err = s.objects.Read(h) // the odb rescans its packs on a miss
	}
	if err != nil {
		if err = s.objectErr(err); errors.Is(err, state.ErrNotFound) {
			return 0, nil, &missingObject{hash: h, err: err}
		}
		return 0, nil, fmt.Errorf("object %s: %w", h, err)
	}
	return t, data, nil
}

// missingObject is readObject's error for an object the store does not
// hold. It wraps state.ErrNotFound, as every "is it there?" asks; a
// revision that a ref or a commit's parent leads to it is damage instead
// (missingErr).
type missingObject struct {
	hash plumbing.Hash
	err  error
}

func (e *missingObject) Error() string { return "object " + e.hash.String() + ": " + e.err.Error() }
func (e *missingObject) Unwrap() error { return e.err }

// missingErr says what a missing object (missingObject) behind err is,
// when the repository names it — a ref, a commit's parent — and so lacks
// what it should hold: an error of its own, not state.ErrNotFound (no
// "no such revision", exit 1, but a damaged repository, exit 3), with the
// way out (attack31 F9: `restore --rev HEAD~1` said `revision "HEAD~1":
// object ID`, the sentence cut, exit 1). Other errors pass as they are.
func missingErr(err error) error {
	var m *missingObject
	if errors.As(err, &m) {
		return fmt.Errorf("object %s is missing from the repository (git fsck --full shows the damage: objects pruned, or an object store named in objects/info/alternates gone; fetch them again, or restore .git from a backup)", m.hash)
	}
	return err
}

// fetched reports whether err is an object missing from this partial clone
// that git has now fetched from the promisor remote (fetchPromised): read
// it again.
func (s *Store) fetched(h plumbing.Hash, err error) bool {
	return err != nil && s.partial && errors.Is(err, odb.ErrNotFound) && s.fetchPromised(h)
}

// PromisorTimeout bounds the wait for git to fetch one object a partial
// clone lacks (fetchPromised), unless the Store was opened with another
// bound (Options.PromisorTimeout): git and every process it started are
// killed then (boundWait). Tests shorten it.
var PromisorTimeout = 2 * time.Minute

// PromisorMemory is how long a fetch cut by its bound is remembered across
// processes (promisorDownFile): the commands started meanwhile fetch
// nothing, and decide at once what they would have decided after waiting.
const PromisorMemory = 10 * time.Minute

// fetchPromised has git fetch an object a partial clone lacks from its
// promisor remote (git cat-file fetches it on demand, as any git command
// that reads it would) and reports whether git found it. strata itself
// never fetches: the remote and its transport are git's.
//
// After one failure (the promisor remote unreachable, the object not
// there) it asks no more: each try may wait for a network, and a command
// needing many objects would wait for each in turn. A fetch the bound cut
// (a remote that hangs: a dead link) is remembered for PromisorMemory in
// <commondir>/strata/promisor-down, so that the next commands, the hooks
// Claude Code runs on every write among them, do not wait again (attack31b
// C); a quick failure costs little to ask again, and is not remembered.
func (s *Store) fetchPromised(h plumbing.Hash) bool {
	if s.promisorDown || s.sudo != 0 {
		return false // under sudo a fetch would add root's packs to the owner's objects
	}
	if s.promisorRecentlyDown() {
		s.promisorDown, s.promisorRemembered = true, true
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(s.promisorWait, PromisorTimeout))
	defer cancel()
	_, err := s.git(ctx, nil, "cat-file", "-t", h.String())
	s.promisorDown = err != nil
	switch {
	case err == nil:
		s.notePromisor(false)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		s.notePromisor(true)
	}
	return err == nil
}

// promisorDownFile is where a fetch the bound cut is remembered: the time
// it failed, in Unix seconds.
func (s *Store) promisorDownFile() string {
	return filepath.Join(s.commonDir, "strata", "promisor-down")
}

// promisorRecentlyDown reports whether a fetch from the promisor remote was
// cut by its bound less than PromisorMemory ago (strata's clock, now): a
// time in the future (a clock set back) or an unreadable file is not.
func (s *Store) promisorRecentlyDown() bool {
	// a regular file of a line, never a FIFO to block on (the hooks read it)
	data, err := state.ReadRegular(s.promisorDownFile(), 64, false)
	if err != nil {
		return false
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return false
	}
	age := now().Sub(time.Unix(sec, 0))
	return age >= 0 && age < PromisorMemory
}

// notePromisor writes down that a fetch was cut by its bound now (down), or
// removes the note after a fetch that succeeded. Best effort, and nothing
// under sudo (writable).
func (s *Store) notePromisor(down bool) {
	if s.writable() != nil {
		return
	}
	name := s.promisorDownFile()
	if !down {
		os.Remove(name)
		return
	}
	if _, err := os.Lstat(filepath.Join(s.gitDir, "HEAD")); err != nil {
		return // the git directory is gone or going: a note would make it again
	}
	sh := s.Shared()
	if sh.MkdirAll(filepath.Dir(name)) != nil {
		return
	}
	atomicfile.WriteFixed(name, []byte(strconv.FormatInt(now().Unix(), 10)+"\n"), sh.FixFile)
}

// objectErr is objectErr for this store: in a partial clone whose promisor
// remote could not give a missing object (fetchPromised), the object is
// not "not recorded" — it is recorded and could not be fetched, an I/O
// failure (exit 3) that names how to see git's own answer.
func (s *Store) objectErr(err error) error {
	if s.partial && s.sudo != 0 && errors.Is(err, odb.ErrNotFound) {
		return errors.New("not in this partial clone, and strata run as root through sudo fetches nothing into another user's repository (run it as that user)")
	}
	if s.partial && s.promisorRemembered && errors.Is(err, odb.ErrNotFound) {
		return fmt.Errorf("not in this partial clone, and a fetch from the promisor remote was cut by its time limit less than %d minutes ago, so none is tried until then (delete %s to try at once; git cat-file -t ID shows why)", int(PromisorMemory/time.Minute), s.promisorDownFile())
	}
	if s.partial && s.promisorDown && errors.Is(err, odb.ErrNotFound) {
		return errors.New("not in this partial clone, and git could not fetch it from the promisor remote (git cat-file -t ID shows why)")
	}
	return objectErr(err)
}

// objectErr gives odb's answer that an object is missing (final: odb reads
// every object git can) as state.ErrNotFound, keeping what odb said.
func objectErr(err error) error {
	switch {
	case err == odb.ErrNotFound:
		return state.ErrNotFound
	case errors.Is(err, odb.ErrNotFound):
		return fmt.Errorf("%w (%v)", state.ErrNotFound, err)
	}
	return err
}

// maxCached bounds the decoded-tree and commit caches by count.
const maxCached = 1 << 16

// maxTreeBytes bounds the decoded-tree cache by what its entries hold: by
// count alone it could keep 65 536 trees of 1 000 entries (gigabytes), and a
// watcher keeps its Store for days. A variable so that tests can lower it.
var maxTreeBytes = 16 << 20

// treeCost is what a decoded tree holds in memory, roughly: its entries and
// their names, and the cache's slot.
func treeCost(entries []treeEntry) int {
	n := 64
	for _, e := range entries {
		n += int(unsafe.Sizeof(e)) + len(e.Name)
	}
	return n
}

// tree returns the decoded entries of tree h; the slice must not be modified.
// Callers hold s.mu.
func (s *Store) tree(h plumbing.Hash) ([]treeEntry, error) {
	if h == odb.EmptyTree || h.IsZero() {
		return nil, nil
	}
	if e, ok := s.trees[h]; ok {
		return e, nil
	}
	t, raw, err := s.readObject(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s: not a tree: %w", h, state.ErrNotFound)
	}
	entries, err := odb.DecodeTree(raw)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	s.treeReads++
	s.cacheTree(h, entries)
	return entries, nil
}

func (s *Store) cacheTree(h plumbing.Hash, entries []treeEntry) {
	if _, ok := s.trees[h]; ok {
		return
	}
	cost := treeCost(entries)
	if len(s.trees) >= maxCached || s.treeBytes+cost > maxTreeBytes {
		clear(s.trees)
		s.treeBytes = 0
	}
	s.trees[h] = entries
	s.treeBytes += cost
}

// commitTree returns the root tree of commit c. Callers hold s.mu.
func (s *Store) commitTree(c plumbing.Hash) (plumbing.Hash, error) {
	if t, ok := s.commits[c]; ok {
		return t, nil
	}
	ci, err := s.readCommit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ci.tree, nil
}

// notCommit is readCommit's error for an object that is there but is not a
// commit (a HEAD or a ref naming a tree or a blob). It wraps
// state.ErrNotFound (no such commit), without saying "not found" of an
// object that is found (attack31b H).
type notCommit struct {
	hash plumbing.Hash
	typ  plumbing.ObjectType
}

func (e *notCommit) Error() string {
	return "object " + e.hash.String() + " is a " + e.typ.String() + ", not a commit"
}
func (e *notCommit) Unwrap() error { return state.ErrNotFound }

// readCommit reads and parses commit c. Callers hold s.mu.
func (s *Store) readCommit(c plumbing.Hash) (commitInfo, error) {
	t, raw, err := s.readObject(c)
	if err != nil {
		return commitInfo{}, err
	}
	if t != plumbing.CommitObject {
		return commitInfo{}, &notCommit{hash: c, typ: t}
	}
	oc, err := odb.ParseCommit(raw)
	if err != nil {
		return commitInfo{}, fmt.Errorf("commit %s: %w", c, err)
	}
	ci := commitInfo{hash: c, tree: oc.Tree, parents: oc.Parents, time: oc.Time, tz: oc.TZ, message: oc.Message}
	if s.shallowList()[c] {
		ci.parents = nil // the history beyond a shallow clone's boundary is not here: a root, as git takes it
	}
	if len(s.commits) >= maxCached {
		clear(s.commits)
	}
	s.commits[c] = ci.tree
	return ci, nil
}

// lookup finds path in tree root. Callers hold s.mu.
func (s *Store) lookup(root plumbing.Hash, path string) (treeEntry, error) {
	parts := strings.Split(path, "/")
	cur := treeEntry{Mode: filemode.Dir, Hash: root}
	for _, p := range parts {
		if !cur.IsDir() {
			return treeEntry{}, state.ErrNotFound
		}
		entries, err := s.tree(cur.Hash)
		if err != nil {
			return treeEntry{}, err
		}
		i, ok := odb.Find(entries, p)
		if !ok {
			return treeEntry{}, state.ErrNotFound
		}
		cur = entries[i]
	}
	return cur, nil
}

// commitInfo is the part of a commit strata reads.
type commitInfo struct {
	hash    plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	time    int64 // committer time, Unix seconds
	tz      string
	message string
}

// writeObject stores data as a loose object of type t and returns its hash.
// Callers hold s.mu.
func (s *Store) writeObject(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	return h, s.objects.Write(t, data, h, Fsync)
}

// storeObject is writeObject for a caller that already hashed data as h.
func (s *Store) storeObject(t plumbing.ObjectType, data []byte, h plumbing.Hash) error {
	return s.objects.Write(t, data, h, Fsync)
}

// openRegular opens a file of git's (a ref, the index, a reflog, a rule or
// config file) without ever blocking: a named pipe put where one is
// expected would hang every command, the agent's hooks included, where git
// itself may not read it (attack20-headline H4). Anything but a regular
// file is refused with an error wrapping state.ErrNotRegular.
func openRegular(name string) (*os.File, error) {
	f, _, err := state.OpenRegular(name, true)
	return f, err
}
