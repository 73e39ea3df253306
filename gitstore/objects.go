package gitstore

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/state"
)

// emptyTree is the hash of the tree with no entries.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// treeEntry is one entry of a decoded tree.
type treeEntry struct {
	name string
	mode filemode.FileMode
	hash plumbing.Hash
}

func (e treeEntry) isDir() bool { return e.mode == filemode.Dir }

// gitLess orders tree entries as git does: a directory sorts as if its name
// ended in "/". A tree in any other order fails `git fsck --strict`.
func gitLess(a, b treeEntry) bool {
	an, bn := a.name, b.name
	if a.isDir() {
		an += "/"
	}
	if b.isDir() {
		bn += "/"
	}
	return an < bn
}

// encodeTree returns the canonical encoding of entries, sorting them first.
func encodeTree(entries []treeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return gitLess(entries[i], entries[j]) })
	var b bytes.Buffer
	b.Grow(len(entries) * 64)
	for _, e := range entries {
		mode := "100644"
		switch e.mode {
		case filemode.Dir:
			mode = "40000" // git's canonical spelling; "040000" fails fsck --strict
		case filemode.Executable:
			mode = "100755"
		case filemode.Symlink:
			mode = "120000"
		case filemode.Submodule:
			mode = "160000"
		}
		b.WriteString(mode)
		b.WriteByte(' ')
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(e.hash[:])
	}
	return b.Bytes()
}

// decodeTree parses a raw tree object.
func decodeTree(raw []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		if sp < 0 {
			return nil, errors.New("corrupt tree")
		}
		m, err := strconv.ParseUint(string(raw[:sp]), 8, 32)
		if err != nil {
			return nil, errors.New("corrupt tree mode")
		}
		raw = raw[sp+1:]
		nul := bytes.IndexByte(raw, 0)
		if nul < 0 || len(raw) < nul+1+20 {
			return nil, errors.New("corrupt tree")
		}
		var e treeEntry
		e.name = string(raw[:nul])
		e.mode = filemode.FileMode(m)
		copy(e.hash[:], raw[nul+1:nul+21])
		raw = raw[nul+21:]
		out = append(out, e)
	}
	return out, nil
}

// readObject returns an object's type and content. A missing object reopens
// the repository once (an outside `git gc` may have packed it) and otherwise
// returns an error wrapping state.ErrNotFound. Callers hold s.mu.
func (s *Store) readObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if t, data, err := s.objects.read(h); err == nil {
		return t, data, nil
	}
	var (
		t    plumbing.ObjectType
		data []byte
	)
	err := s.retryMissing(func() error {
		o, err := s.repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		r, err := o.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(r)
		t = o.Type()
		return err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("object %s: %w", h, translate(err))
	}
	return t, data, nil
}

// maxCached bounds the decoded-tree and commit caches.
const maxCached = 1 << 16

// tree returns the decoded entries of tree h; the slice must not be modified.
// Callers hold s.mu.
func (s *Store) tree(h plumbing.Hash) ([]treeEntry, error) {
	if h == emptyTree || h.IsZero() {
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
	entries, err := decodeTree(raw)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	s.cacheTree(h, entries)
	return entries, nil
}

func (s *Store) cacheTree(h plumbing.Hash, entries []treeEntry) {
	if len(s.trees) >= maxCached {
		clear(s.trees)
	}
	s.trees[h] = entries
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

// readCommit reads and parses commit c. Callers hold s.mu.
func (s *Store) readCommit(c plumbing.Hash) (commitInfo, error) {
	t, raw, err := s.readObject(c)
	if err != nil {
		return commitInfo{}, err
	}
	if t != plumbing.CommitObject {
		return commitInfo{}, fmt.Errorf("object %s: not a commit: %w", c, state.ErrNotFound)
	}
	ci, err := parseCommit(raw)
	if err != nil {
		return commitInfo{}, fmt.Errorf("commit %s: %w", c, err)
	}
	ci.hash = c
	if len(s.commits) >= maxCached {
		clear(s.commits)
	}
	s.commits[c] = ci.tree
	return ci, nil
}

// lookup finds path in tree root. Callers hold s.mu.
func (s *Store) lookup(root plumbing.Hash, path string) (treeEntry, error) {
	parts := strings.Split(path, "/")
	cur := treeEntry{mode: filemode.Dir, hash: root}
	for _, p := range parts {
		if !cur.isDir() {
			return treeEntry{}, state.ErrNotFound
		}
		entries, err := s.tree(cur.hash)
		if err != nil {
			return treeEntry{}, err
		}
		i, ok := findEntry(entries, p)
		if !ok {
			return treeEntry{}, state.ErrNotFound
		}
		cur = entries[i]
	}
	return cur, nil
}

// findEntry finds name in a git-sorted tree (as a file or a directory).
func findEntry(entries []treeEntry, name string) (int, bool) {
	for i := range entries {
		if entries[i].name == name {
			return i, true
		}
	}
	return -1, false
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

// parseCommit parses a raw commit object.
func parseCommit(raw []byte) (commitInfo, error) {
	var ci commitInfo
	for len(raw) > 0 {
		nl := bytes.IndexByte(raw, '\n')
		if nl < 0 {
			return ci, errors.New("corrupt commit")
		}
		line := raw[:nl]
		raw = raw[nl+1:]
		if len(line) == 0 {
			ci.message = string(raw)
			break
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			ci.tree = plumbing.NewHash(string(val))
		case "parent":
			ci.parents = append(ci.parents, plumbing.NewHash(string(val)))
		case "committer":
			// Name <email> 1700000000 +0000
			gt := bytes.LastIndexByte(val, '>')
			if gt < 0 {
				return ci, errors.New("corrupt committer")
			}
			f := strings.Fields(string(val[gt+1:]))
			if len(f) >= 1 {
				t, err := strconv.ParseInt(f[0], 10, 64)
				if err != nil {
					return ci, errors.New("corrupt committer time")
				}
				ci.time = t
			}
			if len(f) >= 2 {
				ci.tz = f[1]
			}
		}
	}
	if ci.tree.IsZero() {
		return ci, errors.New("commit without tree")
	}
	return ci, nil
}

var (
	tmpSeq  atomic.Uint64
	bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	// One pool per compression level; see deflateObject.
	zStored = sync.Pool{New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.NoCompression); return w }}
	zBest   = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}
)

// storeLimit is the size under which loose objects are stored without
// compression: a loose object takes at least one file-system block, so
// compressing a small one saves no disk and costs a third of Record's CPU.
// git reads both forms; git gc recompresses everything it packs.
const storeLimit = 4096

// deflateObject writes the loose-object encoding of an object to buf: zlib
// of "<type> <size>\x00" followed by the content.
func deflateObject(buf *bytes.Buffer, t plumbing.ObjectType, data []byte) error {
	pool := &zBest
	if len(data) < storeLimit {
		pool = &zStored
	}
	z := pool.Get().(*zlib.Writer)
	defer pool.Put(z)
	z.Reset(buf)
	hdr := make([]byte, 0, 32)
	hdr = append(hdr, t.Bytes()...)
	hdr = append(hdr, ' ')
	hdr = strconv.AppendInt(hdr, int64(len(data)), 10)
	hdr = append(hdr, 0)
	if _, err := z.Write(hdr); err != nil {
		return err
	}
	if _, err := z.Write(data); err != nil {
		return err
	}
	return z.Close()
}

// writeObject stores data as a loose object of type t and returns its hash.
// An object already present as a loose file is not written again. The object
// is written to a temporary file in its fan-out directory and renamed into
// place, so a reader never sees a partial object. Callers hold s.mu.
func (s *Store) writeObject(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	return h, s.storeObject(t, data, h)
}

// storeObject is writeObject for a caller that already hashed data as h.
func (s *Store) storeObject(t plumbing.ObjectType, data []byte, h plumbing.Hash) error {
	hex := h.String()
	dir := filepath.Join(s.commonDir, "objects", hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	// Compress into memory first so the object reaches the file in one
	// write: on slow file systems every syscall on a new inode counts.
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	if err := deflateObject(buf, t, data); err != nil {
		return fmt.Errorf("write object: %w", err)
	}
	if err := createFile(final, buf.Bytes(), 0o444); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("write object: %w", err)
	}
	return nil
}

// createFile creates path holding data, atomically: a reader sees no file
// or the whole file. os.ErrExist means path already exists (for an object:
// another writer stored the same object). Missing parents are created.
func createFile(path string, data []byte, perm os.FileMode) error {
	if ok, err := createFileTmpfile(path, data, perm); ok {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		return os.ErrExist
	}
	tmp := filepath.Join(filepath.Dir(path), "tmp_obj_strata_"+strconv.Itoa(os.Getpid())+"_"+strconv.FormatUint(tmpSeq.Add(1), 10))
	f, err := createExcl(tmp, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && Fsync {
		err = f.Sync()
	}
	if ferr := f.Close(); err == nil {
		err = ferr
	}
	if err == nil {
		err = syscallRename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// syscallRename renames without os.Rename's extra Lstat of the target.
func syscallRename(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
