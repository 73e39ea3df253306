package gitstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// The sets kept on refs/strata/gitrules are read through an index of
// their rule files: for each rule file's path, the sets (in the ref's
// order) from which its blob changes. Looking each set's files up in its
// own tree cost every command a look-up per set and per folder of a kept
// file: 2 503 sets and kept files in 200 folders took 21-24 s a `status`,
// 2 000 folders over 140 s, and the look-ups were too many to keep
// (attack21-p1 P1-1). The index is built once for each commit of the ref,
// by comparing each set's tree with the one before it (only the subtrees
// that differ are read), and kept in <commondir>/strata/gitrules-index,
// with a checksum; a folder's chains are then found from the changes to
// its rule files alone (keptGroups).

// keptIndex is the kept sets' rule files as change points.
type keptIndex struct {
	names   []string                // each set's commit (its entry's name in the ref's tree), in the index's order
	trees   []plumbing.Hash         // each set's tree, as indexed
	changes map[string][]keptChange // by rule file path: where its blob changes, by set, ascending
}

// keptChange is a rule file's blob from set on (zero: none).
type keptChange struct {
	set  int32
	blob plumbing.Hash
}

// blobAt is the blob of the rule file at path in set i, zero for none.
func (x *keptIndex) blobAt(path string, i int) plumbing.Hash {
	cs := x.changes[path]
	k := sort.Search(len(cs), func(k int) bool { return int(cs[k].set) > i })
	if k == 0 {
		return plumbing.ZeroHash
	}
	return cs[k-1].blob
}

// keptIndexMax bounds the pairs of trees an index is built from
// comparing, and keptIndexEntries the entries they hold: a pushed tree
// that holds its subtrees many times (2^40 paths in a few objects) is not
// indexed, and its sets are looked up in their trees instead.
var (
	keptIndexMax     = 1 << 20
	keptIndexEntries = 64 << 20
)

// indexBudget is what is left of keptIndexMax and keptIndexEntries.
type indexBudget struct{ pairs, entries int }

var errIndexTooBig = errors.New("too many rule files to index")

// keptIndexFile is where the index of the ref's commit is kept.
func (s *Store) keptIndexFile() string {
	return filepath.Join(s.commonDir, "strata", "gitrules-index")
}

const keptIndexHeader = "strata gitrules-index 3\n"

// keptIndex returns the index of the sets of the kept ref's commit,
// whose tree's entries are entries: read from its file; or, when the file
// is of an earlier commit of the ref whose sets are all still there, that
// index with the sets added since (a pull that keeps one more set read the
// whole index again, 4.5-7.4 s on 2 503 sets: attack21-verify V-1); or
// built. It fails with errIndexTooBig for sets too large to index. Callers
// hold s.mu.
func (s *Store) keptIndex(commit plumbing.Hash, entries []treeEntry) (*keptIndex, error) {
	var x *keptIndex
	if data, err := state.ReadRegular(s.keptIndexFile(), 256<<20, false); err == nil {
		if old, at, ok := parseKeptIndex(data); ok && at == commit {
			if old == nil {
				return nil, errIndexTooBig // found so before: not tried again
			}
			return old, nil
		} else if ok && old != nil {
			x = old
		}
	}
	err := errIndexStale
	if x != nil {
		err = s.extendKeptIndex(x, entries)
	}
	if errors.Is(err, errIndexStale) {
		x = &keptIndex{changes: map[string][]keptChange{}}
		err = s.extendKeptIndex(x, entries)
	}
	if errors.Is(err, errIndexTooBig) {
		x = nil // noted, so that the next command does not try again
	} else if err != nil {
		return nil, err
	}
	if sh := s.Shared(); s.writable() == nil && sh.MkdirAll(filepath.Dir(s.keptIndexFile())) == nil {
		atomicfile.WriteFixed(s.keptIndexFile(), encodeKeptIndex(x, commit), sh.FixFile) // a cache: best effort
	}
	if x == nil {
		return nil, errIndexTooBig
	}
	return x, nil
}

// errIndexStale is extendKeptIndex's answer when a set of the index is no
// longer on the ref (rewritten by hand): the index is built anew.
var errIndexStale = errors.New("a set of the index is gone")

// extendKeptIndex adds to x the sets of entries it does not have yet, each
// compared with the set before it. Callers hold s.mu.
func (s *Store) extendKeptIndex(x *keptIndex, entries []treeEntry) error {
	trees := map[string]plumbing.Hash{}
	for _, e := range entries {
		if e.IsDir() {
			trees[e.Name] = e.Hash
		}
	}
	have := map[string]bool{}
	for i, n := range x.names {
		if t, ok := trees[n]; !ok || i >= len(x.trees) || t != x.trees[i] {
			// gone, or other rule files under the same name (a ref
			// rewritten by hand: attack21-inc I-1)
			return errIndexStale
		}
		have[n] = true
	}
	prev := odb.EmptyTree
	if len(x.names) > 0 {
		prev = trees[x.names[len(x.names)-1]]
	}
	budget := indexBudget{keptIndexMax, keptIndexEntries}
	for _, e := range entries {
		if !e.IsDir() || have[e.Name] {
			continue
		}
		have[e.Name] = true
		i := int32(len(x.names))
		x.names = append(x.names, e.Name)
		x.trees = append(x.trees, e.Hash)
		err := s.ruleDiff(prev, e.Hash, "", &budget, 0, func(path string, blob plumbing.Hash) {
			x.changes[path] = append(x.changes[path], keptChange{i, blob})
		})
		if err != nil {
			return err
		}
		prev = e.Hash
	}
	return nil
}

// ruleDiff calls emit for each rule file (a regular .gitignore or
// .gitattributes) whose blob differs between trees a and b, with b's blob
// (zero where b has none), reading only the subtrees that differ. budget
// is how many more pairs of trees, and entries, it may read. Callers hold
// s.mu.
func (s *Store) ruleDiff(a, b plumbing.Hash, prefix string, budget *indexBudget, depth int, emit func(string, plumbing.Hash)) error {
	if a == b || depth > maxRuleDepth {
		return nil
	}
	ea, err := s.tree(a)
	if err != nil {
		return err
	}
	eb, err := s.tree(b)
	if err != nil {
		return err
	}
	budget.pairs--
	if budget.entries -= len(ea) + len(eb); budget.entries < 0 || budget.pairs < 0 {
		return errIndexTooBig
	}
	inA := make(map[string]treeEntry, len(ea))
	for _, e := range ea {
		inA[e.Name] = e
	}
	rule := func(e treeEntry, ok bool) plumbing.Hash {
		if ok && isRuleBlob(e) {
			return e.Hash
		}
		return plumbing.ZeroHash
	}
	dir := func(e treeEntry, ok bool) plumbing.Hash {
		if ok && e.IsDir() {
			return e.Hash
		}
		return odb.EmptyTree
	}
	visit := func(name string, x treeEntry, xok bool, y treeEntry, yok bool) error {
		if rx, ry := rule(x, xok), rule(y, yok); rx != ry {
			emit(prefix+name, ry)
		}
		if dx, dy := dir(x, xok), dir(y, yok); dx != dy {
			return s.ruleDiff(dx, dy, prefix+name+"/", budget, depth+1, emit)
		}
		return nil
	}
	for _, y := range eb {
		x, ok := inA[y.Name]
		delete(inA, y.Name)
		if err := visit(y.Name, x, ok, y, true); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(inA))
	for n := range inA {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names { // only in a
		if err := visit(n, inA[n], true, treeEntry{}, false); err != nil {
			return err
		}
	}
	return nil
}

// keptGroups returns the different chains of the rule files named name the
// indexed sets have along the folders dirs lead through, in the order of
// the first set having each: found from the changes to those files alone.
func (x *keptIndex) keptGroups(dirs []string, name string) []chainGroup {
	paths := make([]string, len(dirs)+1)
	starts := []int{0}
	for i := range paths {
		paths[i] = fileIn(strings.Join(dirs[:i], "/"), name)
		for _, c := range x.changes[paths[i]] {
			starts = append(starts, int(c.set))
		}
	}
	sort.Ints(starts)
	var gs []chainGroup
	seen := map[string]bool{}
	for k, b := range starts {
		if (k > 0 && starts[k-1] == b) || b >= len(x.names) {
			continue
		}
		chain := make([]plumbing.Hash, len(paths))
		for i, p := range paths {
			chain[i] = x.blobAt(p, b)
		}
		if key := chainKey(dirs, chain); !seen[key] {
			seen[key] = true
			gs = append(gs, chainGroup{state.ShortID(x.names[b]), chain})
		}
	}
	return gs
}

// encodeKeptIndex is the file's content for the index of commit: the
// header, the commit, the sets' names, each path with its changes, and the
// SHA-1 of all that (parseKeptIndex).
func encodeKeptIndex(x *keptIndex, commit plumbing.Hash) []byte {
	b := append([]byte(keptIndexHeader), commit[:]...)
	if x == nil { // too large to index: a single byte says so
		return summed(append(b, 'X'))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(x.names)))
	for i, l := range x.names {
		b = append(b, byte(len(l)))
		b = append(b, l...)
		b = append(b, x.trees[i][:]...)
	}
	paths := make([]string, 0, len(x.changes))
	for p := range x.changes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b = binary.BigEndian.AppendUint32(b, uint32(len(paths)))
	for _, p := range paths {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(x.changes[p])))
		for _, c := range x.changes[p] {
			b = binary.BigEndian.AppendUint32(b, uint32(c.set))
			b = append(b, c.blob[:]...)
		}
	}
	return summed(b)
}

// parseKeptIndex reads an index from data, and the commit of the ref it
// is of (x nil when it says the sets are too large to index); ok is false
// when it does not check out against its SHA-1, or does not parse.
func parseKeptIndex(data []byte) (x *keptIndex, commit plumbing.Hash, ok bool) {
	body, ok := checkSummed(data)
	if !ok {
		return nil, commit, false
	}
	r, ok := bytes.CutPrefix(body, []byte(keptIndexHeader))
	if !ok || len(r) < 20 {
		return nil, commit, false
	}
	copy(commit[:], r[:20])
	r = r[20:]
	if len(r) == 1 && r[0] == 'X' {
		return nil, commit, true // too large to index
	}
	take := func(n int) []byte {
		if n < 0 || len(r) < n {
			ok = false
			return nil
		}
		v := r[:n]
		r = r[n:]
		return v
	}
	u32 := func() int {
		v := take(4)
		if v == nil {
			return 0
		}
		return int(binary.BigEndian.Uint32(v))
	}
	x = &keptIndex{changes: map[string][]keptChange{}}
	n := u32()
	for i := 0; ok && i < n; i++ {
		l := take(1)
		if l == nil {
			break
		}
		x.names = append(x.names, string(take(int(l[0]))))
		var t plumbing.Hash
		copy(t[:], take(20))
		x.trees = append(x.trees, t)
	}
	np := u32()
	for i := 0; ok && i < np; i++ {
		p := string(take(u32()))
		nc := u32()
		if !ok || nc > len(r)/24 {
			return nil, commit, false
		}
		cs := make([]keptChange, 0, nc)
		for k := 0; ok && k < nc; k++ {
			set := u32()
			h := take(20)
			if !ok || set >= n || (k > 0 && set <= int(cs[k-1].set)) {
				return nil, commit, false
			}
			var c keptChange
			c.set = int32(set)
			copy(c.blob[:], h)
			cs = append(cs, c)
		}
		x.changes[p] = cs
	}
	if !ok || len(r) != 0 {
		return nil, commit, false
	}
	return x, commit, true
}
