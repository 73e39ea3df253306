package gitstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// log, blame and restore read a path's history from the Strata-* trailers
// alone (contract §4). A fetched history is a peer's word, so every commit
// a fetch brings that the local state ref does not already reach must say
// in its trailers exactly what it changes: checkNew, run by Fetch before
// anything of the remote's state is merged.

// maxCheckEntries bounds the tree entries checkNew parses for one fetch, in
// all commits together: a push of a few kilobytes can alternate one tree
// of maxRemoteFiles files with the empty tree over thousands of commits.
// strata's own histories stay far below it (a commit that records one file
// of a 1 000-file folder parses a few entries; one recording 1 000 files,
// a thousand). A variable so that tests can lower it.
var maxCheckEntries = 4_000_000

// checkNew checks every commit reachable from head that the local state
// ref does not reach: its trailer blocks must name exactly the paths its
// tree changes from its first parent's (from the empty tree for a root),
// each with the action the trees give (add, update, delete), and every
// entry it adds or changes must pass checkFetched's rules (name, mode,
// depth, length). A commit at a shallow clone's boundary is not checked (its
// parent is not here). Callers hold s.mu.
//
// It returns the drops of the commits of an older strata's kept local form
// (keptLocalCommit), for the caller to judge with Remote.WouldKeep once
// s.mu is released (judgeDrops).
func (s *Store) checkNew(remote string, head plumbing.Hash) ([]keptDrop, error) {
	local, err := s.readRef(s.StateRef())
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("fetch %s: %w", remote, err)
	}
	return s.checkNewFrom(remote, local, head)
}

// checkNewFrom is checkNew for the commits head reaches and local does not.
// Callers hold s.mu.
func (s *Store) checkNewFrom(remote string, local, head plumbing.Hash) ([]keptDrop, error) {
	commits, err := s.newCommits(local, head)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", remote, damaged(s.sharedRef(), head, head, err))
	}
	hc := &historyCheck{s: s, budget: maxCheckEntries, seen: map[keptDrop]bool{}}
	shallow := s.shallowList()
	// newest first: a commit's tree was read as its child's parent tree
	// the step before, and packs (strata's and git's) store older versions
	// of a tree as deltas against newer ones, so each read applies one
	// delta to a base just read
	for i := len(commits) - 1; i >= 0; i-- {
		ci := commits[i]
		if shallow[ci.hash] {
			continue
		}
		if p, why := hc.commit(ci); why != "" {
			return nil, &UnsafeTreeError{Remote: remote, Commit: head.String(), In: ci.hash.String(), Path: p, Reason: why}
		}
	}
	return hc.drops, nil
}

// keptDrop is a file a commit of an older strata's kept local form drops
// from its parent without a delete block: the version it drops (blob) at
// path.
type keptDrop struct {
	commit plumbing.Hash
	path   string
	blob   plumbing.Hash
}

// judgeDrops refuses the first drop this machine would not keep local
// itself. An older strata's commit of a machine with no history names what
// it drops from the remote's tree only on its kept local lines, lines
// anyone who can push may write: such a commit is taken only where the
// dropped version is one this machine's rules refuse too (r.WouldKeep), so
// that log, blame and restore, which read no kept local line, miss no
// deletion a peer chose. Callers do not hold s.mu (WouldKeep reads blobs).
func (s *Store) judgeDrops(r Remote, head plumbing.Hash, drops []keptDrop) error {
	for _, d := range drops {
		if r.WouldKeep != nil && r.WouldKeep(d.path, d.blob.String()) {
			continue
		}
		return &UnsafeTreeError{Remote: r.Name, Commit: head.String(), In: d.commit.String(), Path: d.path,
			Reason: "the commit deletes it, its Strata-* trailers do not name it, and its kept local line is no reason here: this machine would take that version"}
	}
	return nil
}

// newCommits returns the commits head reaches and local does not (every
// one head reaches when local is zero), parents before children, a first
// parent's line before the others: along a linear chain each commit
// follows its parent. Callers hold s.mu.
func (s *Store) newCommits(local, head plumbing.Hash) ([]commitInfo, error) {
	if local == head {
		return nil, nil
	}
	set := map[plumbing.Hash]commitInfo{}
	if local.IsZero() {
		stack := []plumbing.Hash{head}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, ok := set[c]; ok {
				continue
			}
			ci, err := s.readCommit(c)
			if err != nil {
				return nil, err
			}
			set[c] = ci
			stack = append(stack, ci.parents...)
		}
	} else {
		a, err := s.walk(local, head)
		if err != nil {
			return nil, err
		}
		for _, ci := range a.theirsOnly {
			set[ci.hash] = ci
		}
	}
	if _, ok := set[head]; !ok {
		return nil, nil // head is local's or one of its ancestors
	}
	// post-order, first parents first, without recursion (a chain may be
	// long)
	type frame struct {
		ci   commitInfo
		next int
	}
	out := make([]commitInfo, 0, len(set))
	done := map[plumbing.Hash]bool{head: true}
	stack := []frame{{ci: set[head]}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.ci.parents) {
			p := f.ci.parents[f.next]
			f.next++
			if ci, ok := set[p]; ok && !done[p] {
				done[p] = true
				stack = append(stack, frame{ci: ci})
			}
			continue
		}
		out = append(out, f.ci)
		stack = stack[:len(stack)-1]
	}
	return out, nil
}

// historyCheck checks the commits of one fetch. It keeps the trees read
// for the commit checked last and the one before, so that along a chain a
// commit's first parent's trees are not read again.
type historyCheck struct {
	s        *Store
	cur, old map[plumbing.Hash][]byte
	// free are the buffers of trees neither map holds any more, for the
	// next reads (readInto): along a chain of 1 000 commits each read
	// of a 45 KB tree otherwise touched fresh memory, and its page faults
	// were most of the check's time
	free   [][]byte
	budget int // tree entries still to parse
	// drops are those of the commits of an older strata's kept local
	// form, each (path, blob) once, for judgeDrops
	drops []keptDrop
	seen  map[keptDrop]bool
}

// commit checks one commit; it returns the path at fault and why, or "".
// Its header must be one git fsck passes (odb.CommitFault); besides its
// trailer blocks (blocks), its Strata-Time must be one strata writes
// (badTime): a sync decides by it. The time is named with the
// commit's first recorded path ("/" for none).
func (hc *historyCheck) commit(ci commitInfo) (string, string) {
	// a header git fsck fails on (no author line, a bad ident): pushed on,
	// every remote that checks what it receives would refuse this
	// machine's state from then on (attack35 M1)
	if _, raw, err := hc.s.readObject(ci.hash); err != nil {
		return "/", "commit cannot be read: " + err.Error()
	} else if f := odb.CommitFault(raw); f != "" {
		return "/", "not a commit git accepts (git fsck: " + f + "), and every remote that checks what it receives refuses it"
	}
	if p, why := hc.blocks(ci); why != "" {
		return p, why
	}
	if why := badTime(ci.message); why != "" {
		p := "/"
		if es := parseTrailers(ci.message); len(es) > 0 {
			p = es[0].Path
		}
		return p, why
	}
	return "", ""
}

// blocks checks a commit's tree against its parent's and its trailer
// blocks.
func (hc *historyCheck) blocks(ci commitInfo) (string, string) {
	hc.rotate()
	var parent plumbing.Hash
	if len(ci.parents) > 0 {
		t, err := hc.s.commitTree(ci.parents[0])
		if err != nil {
			return "/", "unreadable parent: " + hc.s.objectErr(err).Error()
		}
		parent = t
	}
	changed := map[string]state.Action{}
	if p, why := hc.diff(parent, ci.tree, "", 0, changed); why != "" {
		return p, why
	}
	if p, next, ok := blockWithoutAction(ci.message); ok {
		if next != "" {
			return p, "its Strata-* trailer block names a second path, " + shownPath(next) + ", before any Strata-Action"
		}
		return p, "its Strata-* trailer block has no Strata-Action"
	}
	named := map[string]state.Action{}
	for _, e := range parseTrailers(ci.message) {
		if _, twice := named[e.Path]; twice {
			return e.Path, "named twice in the commit's Strata-* trailers"
		}
		named[e.Path] = e.Action
	}
	if hc.s.prefix == "home/" {
		// what a home history holds but the auto-memory file is dropped
		// by the sync that takes it, never written or shown: whether its
		// trailers tell it truly harms nothing, and refused, one such
		// commit in the shared home history stopped every home sync for
		// good (attack36c M2)
		maps.DeleteFunc(changed, func(p string, _ state.Action) bool { return hc.s.foreign(p) })
		maps.DeleteFunc(named, func(p string, _ state.Action) bool { return hc.s.foreign(p) })
	}
	p, why := mismatch(changed, named)
	if why != "" && len(ci.parents) == 1 && keptLocalCommit(ci.message) {
		// An older strata's sync that kept local versions when this side
		// had no history yet wrote one commit on the remote's head whose
		// trailers say what it holds, every file an add from nothing;
		// what it drops from its parent is each a kept local line of its
		// message, and judged by this machine's rules (judgeDrops).
		// strata now writes a delete block for each instead (writeMerge).
		if drops, _, why2 := hc.keptLocal(ci, parent, named); why2 == "" {
			return hc.judgeLater(drops)
		}
	}
	return p, why
}

// judgeLater keeps drops for judgeDrops, each (path, blob) once. Each
// judged reads and validates a blob: at most as many as a fetched head may
// hold files.
func (hc *historyCheck) judgeLater(drops []keptDrop) (string, string) {
	for _, d := range drops {
		k := keptDrop{path: d.path, blob: d.blob}
		if hc.seen[k] {
			continue
		}
		if hc.seen[k] = true; len(hc.seen) > maxRemoteFiles {
			return d.path, fmt.Sprintf("more than %d files dropped on kept local lines in the fetched commits, over strata's limit", maxRemoteFiles)
		}
		hc.drops = append(hc.drops, d)
	}
	return "", ""
}

// keptLocal checks a commit of keptLocalCommit's form: its trailers against
// its tree read from nothing, and each path it drops from its parent
// against its message's kept local lines; it returns what it drops.
func (hc *historyCheck) keptLocal(ci commitInfo, parent plumbing.Hash, named map[string]state.Action) ([]keptDrop, string, string) {
	all := map[string]state.Action{}
	if p, why := hc.diff(plumbing.ZeroHash, ci.tree, "", 0, all); why != "" {
		return nil, p, why
	}
	if p, why := mismatch(all, named); why != "" {
		return nil, p, why
	}
	dropped := map[string]state.Action{}
	if p, why := hc.diff(parent, ci.tree, "", 0, dropped); why != "" {
		return nil, p, why
	}
	kept, more := keptLines(ci.message)
	var drops []keptDrop
	for _, p := range sortedKeys(dropped) {
		switch {
		case dropped[p] != state.ActionDelete:
			return nil, p, "the commit " + actionVerb(dropped[p]) + " it, and its trailers read from no history"
		case kept[p]:
		case more > 0:
			more--
		default:
			return nil, p, "the commit deletes it, and its message keeps no local version of it"
		}
		e, err := hc.s.lookup(parent, p)
		if err != nil {
			return nil, p, "unreadable parent: " + hc.s.objectErr(err).Error()
		}
		drops = append(drops, keptDrop{commit: ci.hash, path: p, blob: e.Hash})
	}
	return drops, "", ""
}

// keptLocalCommit reports whether msg is that of a sync's commit of the
// versions it kept local with no history of its own: every trailer block's
// source is sync, and a line keeps a local version.
func keptLocalCommit(msg string) bool {
	for _, e := range parseTrailers(msg) {
		if e.Source != state.SourceSync || e.Action != state.ActionAdd {
			return false
		}
	}
	kept, more := keptLines(msg)
	return len(kept) > 0 || more > 0
}

// keptLines reads the kept local lines of a merge message, and the count
// of its "and N more paths" line.
func keptLines(msg string) (map[string]bool, int) {
	kept := map[string]bool{}
	more := 0
	for _, d := range decisionsOf(msg) {
		if d.Kept != "" {
			kept[d.Path] = true
		}
	}
	for _, line := range strings.Split(msg, "\n") {
		if n, ok := strings.CutPrefix(line, "and "); ok {
			if n, ok = strings.CutSuffix(n, " more paths decided or kept local, not listed"); ok {
				if v, err := strconv.Atoi(n); err == nil && v > 0 {
					more = v
				}
			}
		}
	}
	return kept, more
}

// mismatch compares what a commit changes with what its trailers name and
// returns the first path, in path order, where they differ.
func mismatch(changed, named map[string]state.Action) (string, string) {
	var bad []string
	for p, a := range changed {
		if named[p] != a {
			bad = append(bad, p)
		}
	}
	for p := range named {
		if _, ok := changed[p]; !ok {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return "", ""
	}
	sort.Strings(bad)
	p := bad[0]
	a, ok := changed[p]
	switch n, isNamed := named[p]; {
	case !ok:
		return p, "its Strata-* trailers say " + quoteAction(n) + ", the commit does not change it"
	case !isNamed:
		return p, "the commit " + actionVerb(a) + " it, its Strata-* trailers do not name it"
	default:
		return p, "the commit " + actionVerb(a) + " it, its Strata-* trailers say " + quoteAction(n)
	}
}

func actionVerb(a state.Action) string {
	switch a {
	case state.ActionAdd:
		return "adds"
	case state.ActionDelete:
		return "deletes"
	}
	return "updates"
}

// quoteAction is a trailer's action as a message shows it: a peer wrote it.
func quoteAction(a state.Action) string {
	switch a {
	case state.ActionAdd, state.ActionUpdate, state.ActionDelete:
		return string(a)
	}
	return strconv.Quote(string(a))
}

func sortedKeys(m map[string]state.Action) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// read returns the raw tree h, "" and a reason when it cannot be used.
func (hc *historyCheck) read(h plumbing.Hash) ([]byte, string) {
	if h.IsZero() || h == odb.EmptyTree {
		return nil, ""
	}
	if raw, ok := hc.cur[h]; ok {
		return raw, ""
	}
	if raw, ok := hc.old[h]; ok {
		hc.cur[h] = raw
		return raw, ""
	}
	buf := hc.take()
	raw, why := hc.s.fetchedTreeInto(h, buf)
	if !sameStorage(raw, buf) {
		hc.give(buf)
	}
	if why != "" {
		return nil, why
	}
	hc.cur[h] = raw
	return raw, ""
}

// rotate starts a commit's check: the trees of the one checked last become
// the old ones, and those of the one before that, unless read again since,
// are free for reuse.
func (hc *historyCheck) rotate() {
	for h, raw := range hc.old {
		if _, again := hc.cur[h]; !again {
			hc.give(raw)
		}
	}
	hc.old, hc.cur = hc.cur, map[plumbing.Hash][]byte{}
}

// maxFree bounds the buffers kept for reuse.
const maxFree = 64

// take returns the largest free buffer, or nil.
func (hc *historyCheck) take() []byte {
	best := -1
	for i, b := range hc.free {
		if best < 0 || cap(b) > cap(hc.free[best]) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := hc.free[best]
	last := len(hc.free) - 1
	hc.free[best], hc.free[last] = hc.free[last], nil
	hc.free = hc.free[:last]
	return b
}

// give keeps b for reuse.
func (hc *historyCheck) give(b []byte) {
	if cap(b) > 0 && len(hc.free) < maxFree {
		hc.free = append(hc.free, b)
	}
}

// sameStorage reports whether a and b start at the same byte.
func sameStorage(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// rawEntry is one entry of a raw tree.
type rawEntry struct {
	mode, name []byte
	id         plumbing.Hash
}

func (e rawEntry) isTree() bool { return string(e.mode) == "40000" }

// key is the entry's name as git orders it: a tree's as if it ended in "/".
func (e rawEntry) key() string {
	if e.isTree() {
		return string(e.name) + "/"
	}
	return string(e.name)
}

// entryLen returns the length of the entry raw starts with, -1 when it is
// not a whole entry.
func entryLen(raw []byte) int {
	nul := bytes.IndexByte(raw, 0)
	if nul < 0 || len(raw) < nul+21 {
		return -1
	}
	return nul + 21
}

// parseEntries parses the entries of raw, a run of whole entries.
func (hc *historyCheck) parseEntries(raw []byte) ([]rawEntry, bool) {
	var out []rawEntry
	for len(raw) > 0 {
		n := entryLen(raw)
		sp := bytes.IndexByte(raw, ' ')
		if n < 0 || sp < 0 || sp >= n-21 {
			return nil, false
		}
		var id plumbing.Hash
		copy(id[:], raw[n-20:n])
		out = append(out, rawEntry{mode: raw[:sp], name: raw[sp+1 : n-21], id: id})
		raw = raw[n:]
	}
	hc.budget -= len(out)
	return out, true
}

// middles returns the runs of whole entries where raw trees a and b
// differ: the entries both start with and end with, byte for byte, are
// left out, found by comparing the bytes and then stepping over the
// entries of the common start (never parsing their names). It also
// returns the last entry before the runs and the first after (nil when
// none) so that the caller can check the order at their edges. ok is false
// when a tree does not split into whole entries.
func middles(a, b []byte) (ma, mb, before, after []byte, ok bool) {
	n := commonPrefix(a, b)
	i := 0 // a boundary in both: every entry before it is in the common start
	for {
		l := entryLen(a[i:])
		if l < 0 || i+l > n {
			break
		}
		before = a[i : i+l]
		i += l
	}
	m := commonSuffix(a[i:], b[i:]) // the common end, after the common start
	ea, okA := tailStart(a, i, m)
	eb, okB := tailStart(b, i, m)
	if !okA || !okB {
		return nil, nil, nil, nil, false
	}
	for len(a)-ea != len(b)-eb { // step the longer end until both align
		raw, at := a, &ea
		if len(b)-eb > len(a)-ea {
			raw, at = b, &eb
		}
		l := entryLen(raw[*at:])
		if l < 0 {
			return nil, nil, nil, nil, false
		}
		*at += l
	}
	if ea < len(a) {
		after = a[ea : ea+entryLen(a[ea:])]
	}
	return a[i:ea], b[i:eb], before, after, true
}

// commonPrefix returns the length of the bytes a and b start with alike,
// compared eight at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if binary.LittleEndian.Uint64(a[i:]) != binary.LittleEndian.Uint64(b[i:]) {
			break
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the bytes a and b end with alike.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if binary.LittleEndian.Uint64(a[len(a)-i-8:]) != binary.LittleEndian.Uint64(b[len(b)-i-8:]) {
			break
		}
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// tailStart returns the first entry boundary of raw, from i on, whose
// entries to the end lie within the last m bytes (len(raw) when none).
func tailStart(raw []byte, i, m int) (int, bool) {
	for i < len(raw) && len(raw)-i > m {
		l := entryLen(raw[i:])
		if l < 0 {
			return 0, false
		}
		i += l
	}
	return i, true
}

// diff compares tree a (the first parent's, zero for none) with tree b (the
// commit's) at dir, depth elements deep, and adds to out each file path
// whose blob differs, with its action. Equal subtrees are skipped, and of
// two versions of one tree only the entries between their common start and
// end are parsed. Every entry of b that differs from a is held to
// checkTree's rules. It returns the path at fault and why, or "".
func (hc *historyCheck) diff(a, b plumbing.Hash, dir string, depth int, out map[string]state.Action) (string, string) {
	name := dir
	if name == "" {
		name = "/"
	}
	if a == b {
		return "", ""
	}
	ra, why := hc.read(a)
	if why != "" {
		return name, why
	}
	rb, why := hc.read(b)
	if why != "" {
		return name, why
	}
	ma, mb, before, after, ok := middles(ra, rb)
	if !ok {
		return name, "corrupt tree"
	}
	ea, okA := hc.parseEntries(ma)
	eb, okB := hc.parseEntries(mb)
	if !okA || !okB {
		return name, "corrupt tree"
	}
	if hc.budget < 0 {
		return name, fmt.Sprintf("more than %d tree entries to compare in the fetched commits, over strata's limit", maxCheckEntries)
	}
	// b's differing entries: valid, and in git's order with the entries
	// around them
	prev := ""
	if before != nil {
		if e, ok := hc.parseOne(before); ok {
			prev = e.key()
		}
	}
	for k, e := range eb {
		p := string(e.name)
		if dir != "" {
			p = dir + "/" + p
		}
		if why := checkEntry(e, p, depth, hc.s.foreign(p)); why != "" {
			return p, why
		}
		key := e.key()
		if (k > 0 || before != nil) && prev >= key {
			return p, "duplicate or unsorted tree entry"
		}
		prev = key
	}
	if after != nil && len(eb) > 0 {
		if e, ok := hc.parseOne(after); ok && prev >= e.key() {
			return name, "duplicate or unsorted tree entry"
		}
	}
	// merge the two runs by git's order
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var x, y *rawEntry
		switch {
		case j == len(eb):
			x = &ea[i]
		case i == len(ea):
			y = &eb[j]
		default:
			switch kx, ky := ea[i].key(), eb[j].key(); {
			case kx < ky:
				x = &ea[i]
			case kx > ky:
				y = &eb[j]
			default:
				x, y = &ea[i], &eb[j]
			}
		}
		if x != nil {
			i++
		}
		if y != nil {
			j++
		}
		var e rawEntry
		if y != nil {
			e = *y
		} else {
			e = *x
		}
		p := string(e.name)
		if dir != "" {
			p = dir + "/" + p
		}
		if e.isTree() {
			var ta, tb plumbing.Hash
			if x != nil {
				ta = x.id
			}
			if y != nil {
				tb = y.id
			}
			if q, why := hc.diff(ta, tb, p, depth+1, out); why != "" {
				return q, why
			}
			continue
		}
		switch {
		case x == nil:
			out[p] = state.ActionAdd
		case y == nil:
			out[p] = state.ActionDelete
		case x.id != y.id:
			out[p] = state.ActionUpdate
		}
	}
	return "", ""
}

// parseOne parses a single raw entry.
func (hc *historyCheck) parseOne(raw []byte) (rawEntry, bool) {
	es, ok := hc.parseEntries(raw)
	if !ok || len(es) != 1 {
		return rawEntry{}, false
	}
	return es[0], true
}

// checkEntry holds one entry a fetched commit adds or changes to
// checkTree's rules; it returns why it is refused, or "".
//
// foreign, for a path a home history drops (Store.foreign), takes any mode
// (modeFault).
func checkEntry(e rawEntry, p string, depth int, foreign bool) string {
	if len(p) > state.MaxPathLen {
		return fmt.Sprintf("path of %d bytes, over %d", len(p), state.MaxPathLen)
	}
	if err := state.CheckName(string(e.name)); err != nil {
		return err.Error()
	}
	if e.id.IsZero() {
		return "null object id"
	}
	if why := modeFault(string(e.mode), foreign); why != "" {
		return why
	}
	if e.isTree() && depth+1 >= state.MaxPathDepth {
		return fmt.Sprintf("trees nested more than %d deep", state.MaxPathDepth-1)
	}
	return ""
}

// modeFault says why a tree entry's mode is refused: "" for a file's
// (100644, 100755) or a tree's (40000), and for any mode at a path a home
// sync drops (foreign: never written, shown or merged; refused, a
// symbolic link or gitlink anywhere in the shared home history stopped
// every home sync for good, attack36c M2). checkTree and checkEntry ask it.
func modeFault(mode string, foreign bool) string {
	switch {
	case mode == "100644", mode == "100755", mode == "40000", foreign:
		return ""
	case mode == "120000":
		return "a symbolic link, not a regular file"
	case mode == "160000":
		return "a gitlink (submodule), not a regular file"
	}
	return "mode " + mode + ", want 100644, 100755 or 40000"
}
