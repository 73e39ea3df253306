package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// The rule files of the rule sets (ignorebefore.go) are found by looking a
// path up, folder by folder, in each set's tree. A repository whose history
// changes a nested .gitignore in many commits keeps thousands of sets, each
// a tree listing every folder that holds one (attack20-f10 P1: 2 503 sets of
// ~2 000 folders); every command looked each set's root up again, inflating
// some 150 MB of trees, 5 to 9 s for a `status` and 2.9 s for the Claude Code
// hook. The answers to those look-ups, "the entry named N in tree T", never
// change (trees are content-addressed), so they are kept: in memory for the
// process, and in <gitdir>/strata/gitrules-memo for the next one. It holds
// only what was asked, a few entries per set, never a walk of a tree (a
// pushed tree of 2^40 paths costs what it costs to look up one).
//
// The file is a cache, nothing more: one that cannot be read, does not
// parse or does not check out against the SHA-1 it ends with is dropped
// and built again. It is strata's own, in the git
// directory; whoever can write there can change what git itself does.

// memoKey is one look-up: the entry named name in tree tree.
type memoKey struct {
	tree plumbing.Hash
	name string
}

// memoVal is its answer: the entry, or (ok false) none of that name.
type memoVal struct {
	e  treeEntry
	ok bool
}

// ruleMemo is the store's kept look-ups. Callers hold s.mu.
type ruleMemo struct {
	loaded bool
	m      map[memoKey]memoVal
	fresh  int // answers found since the file was last written
}

// memoSaveAt is how many new answers make a command write the file again:
// a repository with a few rule sets never writes it.
const memoSaveAt = 64

// memoMax bounds the answers kept, in memory and in the file (about 70
// bytes each): past it, the memory is cleared and the file written anew.
const memoMax = 1 << 18

const memoHeader = "strata gitrules-memo 2\n"

func (s *Store) ruleMemoFile() string { return filepath.Join(s.gitDir, "strata", "gitrules-memo") }

// ruleStep returns the entry named name in tree, from the memo or by
// reading the tree; reading it also notes its .gitignore and
// .gitattributes, which the next look-ups ask for. Callers hold s.mu.
func (s *Store) ruleStep(tree plumbing.Hash, name string) (memoVal, error) {
	s.loadRuleMemo()
	if v, ok := s.memo.m[memoKey{tree, name}]; ok {
		return v, nil
	}
	entries, err := s.tree(tree)
	if err != nil {
		return memoVal{}, err
	}
	if len(s.memo.m) >= memoMax {
		clear(s.memo.m)
	}
	var out memoVal
	for _, n := range []string{name, ".gitignore", ".gitattributes"} {
		k := memoKey{tree, n}
		if _, ok := s.memo.m[k]; ok && n != name {
			continue
		}
		v := memoVal{}
		if i, ok := odb.Find(entries, n); ok {
			v = memoVal{entries[i], true}
		}
		if n == name {
			out = v
		}
		s.memo.m[k] = v
		s.memo.fresh++
	}
	return out, nil
}

// loadRuleMemo reads the file, once. Callers hold s.mu.
func (s *Store) loadRuleMemo() {
	if s.memo.loaded {
		return
	}
	s.memo.loaded = true
	s.memo.m = map[memoKey]memoVal{}
	data, err := state.ReadRegular(s.ruleMemoFile(), memoMax*600, false)
	if err != nil {
		return
	}
	m, ok := parseRuleMemo(data)
	if ok {
		s.memo.m = m
	}
}

// parseRuleMemo reads the file's records: the tree, whether it has the
// entry, its mode and hash when it does, and the name. Anything else and
// the whole file is dropped.
func parseRuleMemo(data []byte) (map[memoKey]memoVal, bool) {
	data, ok := checkSummed(data)
	if !ok {
		return nil, false // a byte changed (attack21-p1 P1-2: flipped bytes made private files shareable)
	}
	rest, ok := strings.CutPrefix(string(data), memoHeader)
	if !ok {
		return nil, false
	}
	b := []byte(rest)
	m := map[memoKey]memoVal{}
	for len(b) > 0 {
		if len(b) < 20+1+2 || len(m) >= memoMax {
			return nil, false
		}
		var k memoKey
		copy(k.tree[:], b[:20])
		has := b[20]
		b = b[21:]
		var v memoVal
		switch has {
		case 0:
		case 1:
			if len(b) < 4+20 {
				return nil, false
			}
			v.ok = true
			v.e.Mode = filemode.FileMode(binary.BigEndian.Uint32(b[:4]))
			copy(v.e.Hash[:], b[4:24])
			b = b[24:]
		default:
			return nil, false
		}
		if len(b) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(b[:2]))
		b = b[2:]
		if n == 0 || len(b) < n || strings.ContainsAny(string(b[:n]), "/\x00") {
			return nil, false
		}
		k.name = string(b[:n])
		b = b[n:]
		v.e.Name = k.name
		m[k] = v
	}
	return m, true
}

// saveRuleMemo writes the memo when enough answers are new (best effort:
// it is a cache).
func (s *Store) saveRuleMemo() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memo.fresh < memoSaveAt || s.writable() != nil {
		return
	}
	name := s.ruleMemoFile()
	if _, err := os.Lstat(filepath.Join(filepath.Dir(filepath.Dir(name)), "HEAD")); err != nil {
		// the git directory is gone or going (rm -rf .git under a
		// watcher): a memo written now would make it again, or keep its
		// removal from ending ("directory not empty")
		return
	}
	s.memo.fresh = 0
	buf := encodeRuleMemo(s.memo.m)
	if s.Shared().MkdirAll(filepath.Dir(name)) != nil {
		return
	}
	atomicfile.WriteFixed(name, buf, s.Shared().FixFile)
}

// encodeRuleMemo is the file's content for m (parseRuleMemo reads it),
// ending with the SHA-1 of what comes before.
func encodeRuleMemo(m map[memoKey]memoVal) []byte {
	buf := []byte(memoHeader)
	for k, v := range m {
		if len(k.name) == 0 || len(k.name) > 0xffff {
			continue
		}
		buf = append(buf, k.tree[:]...)
		if v.ok {
			buf = append(buf, 1)
			buf = binary.BigEndian.AppendUint32(buf, uint32(v.e.Mode))
			buf = append(buf, v.e.Hash[:]...)
		} else {
			buf = append(buf, 0)
		}
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(k.name)))
		buf = append(buf, k.name...)
	}
	return summed(buf)
}

// summed is data followed by its SHA-1, as strata's cache files in the git
// directory end (checkSummed reads them back).
func summed(data []byte) []byte {
	sum := sha1.Sum(data)
	return append(data, sum[:]...)
}

// checkSummed returns what precedes the SHA-1 that ends data, and whether
// it checks out against it.
func checkSummed(data []byte) ([]byte, bool) {
	if len(data) < sha1.Size {
		return nil, false
	}
	body, sum := data[:len(data)-sha1.Size], data[len(data)-sha1.Size:]
	s := sha1.Sum(body)
	return body, bytes.Equal(s[:], sum)
}

// ruleEntry is the entry of the regular file at path in tree root (ok
// false, and a zero entry, when there is none); unreadable when a tree on
// the way could not be read (a partial clone without it, which git could
// not fetch; a damaged object): then it is not known whether there is one.
// Callers hold s.mu.
func (s *Store) ruleEntry(root plumbing.Hash, path string) (e treeEntry, ok, unreadable bool) {
	cur := root
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if cur == odb.EmptyTree || cur.IsZero() {
			return treeEntry{}, false, false
		}
		v, err := s.ruleStep(cur, p)
		if err != nil {
			return treeEntry{}, false, err != state.ErrNotFound // the bare sentinel: no such entry
		}
		if !v.ok {
			return treeEntry{}, false, false
		}
		if i < len(parts)-1 {
			if !v.e.IsDir() {
				return treeEntry{}, false, false
			}
			cur = v.e.Hash
			continue
		}
		e = v.e
	}
	if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
		return treeEntry{}, false, false
	}
	return e, true, false
}
