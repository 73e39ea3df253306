package gitstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/strata-dev/strata/atomicfile"
	"hash/crc32"
	"hash/fnv"
	"io"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/state"
)

// The time index is a cache of one ref's first-parent chain, kept in
// <commondir>/strata/index/<escaped ref>.idx so that At and Log need not walk
// 100 000 commits. It is validated against the ref's head on every use,
// caught up incrementally, and rebuilt from the commits when it does not
// match; deleting it loses nothing. The format is in docs/format.md.
const (
	idxMagic   = "STRATAIX"
	idxVersion = 4  // 4: an older kept local commit's bloom has the paths it drops; 3: a record carries its chain's last time inversion; 2: CRC-32C; older files are rebuilt
	idxHeader  = 16 // magic, version (uint32), record size (uint32)
	idxRecSize = 44 // time (int64), path bloom (uint64), hash (20 bytes), last inversion (uint32), CRC-32C of the first 40 bytes
	idxCRCAt   = 40 // offset of the CRC in a record
)

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// recCRC is the checksum of a record's first idxCRCAt bytes, for a whole
// file of records (hash/crc32, with the CPU's CRC-32C instruction).
func recCRC(r []byte) uint32 { return crc32.Checksum(r[:idxCRCAt], castagnoli()) }

// recOK reports whether record r's checksum matches.
func recOK(r []byte) bool { return recCRC(r) == binary.BigEndian.Uint32(r[idxCRCAt:]) }

// crc32cBytes is CRC-32C's byte-at-a-time table (1 KB, built in microseconds).
var crc32cBytes = sync.OnceValue(func() *[256]uint32 {
	var t [256]uint32
	for i := range t {
		c := uint32(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crc32.Castagnoli
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return &t
})

// recOKOne is recOK for a look-up that checks a few records (At's binary
// search): hash/crc32's first CRC-32C builds the tables of its SSE4.2 code,
// 0.2-0.3 ms on this project's test machine, a tenth of a `strata show
// --at`; this byte-wise loop costs about a microsecond a record.
func recOKOne(r []byte) bool {
	t := crc32cBytes()
	c := ^uint32(0)
	for _, b := range r[:idxCRCAt] {
		c = t[byte(c)^b] ^ c>>8
	}
	return ^c == binary.BigEndian.Uint32(r[idxCRCAt:])
}

// idxRec is one commit of the chain.
type idxRec struct {
	time  int64 // committer time, Unix seconds
	bloom uint64
	hash  plumbing.Hash
	// inv is 1 + the position of the newest record, up to this one, whose
	// time is before some earlier record's (a clock set back, a merge of
	// older commits), 0 when there is none. It only depends on the records
	// before it, so appends never rewrite it, and it tells a reader of the
	// file that every record after that position is in time order and not
	// before anything older: At can binary-search them (atFromFile).
	inv uint32
}

// refIndex is the chain of one ref, oldest first.
type refIndex struct {
	recs     []idxRec
	sufMin   []int64 // sufMin[i] = min(recs[i:].time): non-decreasing, so At can binary-search it even when commit times are not monotonic
	preMax   []int64 // preMax[i] = max(recs[:i+1].time): lets Log stop once everything older is before Since
	diskSize int64   // size of the index file this matches, -1 when unknown
}

func (ix *refIndex) last() plumbing.Hash {
	if ix == nil || len(ix.recs) == 0 {
		return plumbing.ZeroHash
	}
	return ix.recs[len(ix.recs)-1].hash
}

func (ix *refIndex) derive() {
	n := len(ix.recs)
	ix.sufMin = make([]int64, n)
	ix.preMax = make([]int64, n)
	for i := n - 1; i >= 0; i-- {
		ix.sufMin[i] = ix.recs[i].time
		if i+1 < n && ix.sufMin[i+1] < ix.sufMin[i] {
			ix.sufMin[i] = ix.sufMin[i+1]
		}
	}
	var inv uint32
	for i := 0; i < n; i++ {
		ix.preMax[i] = ix.recs[i].time
		if i > 0 && ix.preMax[i-1] > ix.preMax[i] {
			ix.preMax[i] = ix.preMax[i-1]
			inv = uint32(i) + 1
		}
		ix.recs[i].inv = inv
	}
}

// bloomBits sets three bits of a 64-bit filter for path.
func bloomBits(path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	v := h.Sum64()
	return 1<<(v&63) | 1<<((v>>6)&63) | 1<<((v>>12)&63)
}

func (s *Store) indexFile(ref string) string {
	return filepath.Join(s.commonDir, "strata", "index", url.PathEscape(ref)+".idx")
}

// loadIndex reads an index file. A missing or foreign file gives an empty
// index; a torn final record (a crash mid-append) is dropped.
func loadIndex(path string) *refIndex {
	b, err := state.ReadRegular(path, 0, true)
	if err != nil || len(b) < idxHeader || string(b[:8]) != idxMagic ||
		binary.BigEndian.Uint32(b[8:]) != idxVersion || binary.BigEndian.Uint32(b[12:]) != idxRecSize {
		return &refIndex{diskSize: -1}
	}
	body := b[idxHeader:]
	n := len(body) / idxRecSize
	ix := &refIndex{recs: make([]idxRec, n), diskSize: int64(len(b))}
	if len(body)%idxRecSize != 0 {
		ix.diskSize = -1 // rewrite, never append after a torn record
	}
	stored := make([]uint32, n)
	for i := range ix.recs {
		r := body[i*idxRecSize : (i+1)*idxRecSize]
		if !recOK(r) {
			return &refIndex{diskSize: -1} // damaged: rebuild from the commits
		}
		ix.recs[i].time = int64(binary.BigEndian.Uint64(r))
		ix.recs[i].bloom = binary.BigEndian.Uint64(r[8:])
		copy(ix.recs[i].hash[:], r[16:36])
		stored[i] = binary.BigEndian.Uint32(r[36:])
	}
	ix.derive()
	for i, r := range ix.recs {
		if r.inv != stored[i] {
			return &refIndex{diskSize: -1} // written wrong: rebuild
		}
	}
	return ix
}

func encodeRecs(recs []idxRec) []byte {
	b := make([]byte, len(recs)*idxRecSize)
	for i, r := range recs {
		o := b[i*idxRecSize:]
		binary.BigEndian.PutUint64(o, uint64(r.time))
		binary.BigEndian.PutUint64(o[8:], r.bloom)
		copy(o[16:36], r.hash[:])
		binary.BigEndian.PutUint32(o[36:], r.inv)
		binary.BigEndian.PutUint32(o[idxCRCAt:], recCRC(o))
	}
	return b
}

// index returns ref's chain, caught up to the ref's current head. A missing
// ref gives an empty chain. Callers hold s.mu.
func (s *Store) index(ref string) (*refIndex, error) {
	head, err := s.readRef(ref)
	if errors.Is(err, state.ErrNotFound) {
		return &refIndex{}, nil
	}
	if err != nil {
		return nil, err
	}
	file := s.indexFile(ref)
	ix := s.indexes[ref]
	if ix == nil {
		ix = loadIndex(file)
		s.indexes[ref] = ix
	}
	if ix.last() == head {
		return ix, nil
	}
	// Another process may have caught the file up already.
	if fi, err := os.Stat(file); err == nil && fi.Size() != ix.diskSize {
		if ix = loadIndex(file); ix.last() == head {
			s.indexes[ref] = ix
			return ix, nil
		}
	}
	recs, appendFrom, err := s.catchUp(ref, ix.recs, head)
	var de *DamagedError
	var nc *NotCommitError
	if errors.As(err, &de) || errors.As(err, &nc) {
		return nil, err // each names the ref itself
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", ref, err)
	}
	nix := &refIndex{recs: recs, diskSize: -1}
	nix.derive()
	if s.writable() == nil { // a cache: a Store that writes nothing reads it, keeps it in memory
		nix.diskSize = persistIndex(file, ix, nix, appendFrom, s.Shared())
	}
	s.indexes[ref] = nix
	return nix, nil
}

// catchUp walks ref's chain back from head until it meets a commit of
// recs, and returns the chain up to head and the position from which
// records are new (-1 when the old records were cut, e.g. after the ref was
// reset, and the file must be rewritten).
//
// The chain is the commits the ref stood at on this machine: the first
// parent, except at a merge the ref was fast-forwarded over (another
// machine's sync merged this one's work as its second parent), where it is
// the parent the ref came from, as the ref's reflog tells. Without that,
// `show --at` after a fast-forward would read the other machine's history
// and miss this machine's own records. A merge's parent is followed only
// when the reflog moved the ref from it to the merge or to a commit above
// it, so a commit the ref left for good (a forget's rewrite) is never
// walked again.
func (s *Store) catchUp(ref string, recs []idxRec, head plumbing.Hash) ([]idxRec, int, error) {
	last := plumbing.ZeroHash
	if len(recs) > 0 {
		last = recs[len(recs)-1].hash
	}
	var (
		walked []idxRec // newest first
		pos    map[plumbing.Hash]int
		from   map[plumbing.Hash][]plumbing.Hash // the reflog, read at the first merge
		// commits the ref moved from to one walked that the walk has not
		// met yet (a parent of the commit walked is never one it met)
		pending  = map[plumbing.Hash]bool{}
		searched = map[plumbing.Hash]bool{}          // pending ones looked for beyond a merge once
		via      = map[plumbing.Hash]plumbing.Hash{} // the way down to one found so, commit by commit
	)
	join := func(keep int, k int) []idxRec {
		out := make([]idxRec, 0, keep+k)
		out = append(out, recs[:keep]...)
		for i := k - 1; i >= 0; i-- {
			out = append(out, walked[i])
		}
		return out
	}
	for c := head; ; {
		if c == last {
			return join(len(recs), len(walked)), len(recs), nil
		}
		if p, ok := pos[c]; ok {
			return join(p+1, len(walked)), -1, nil
		}
		ci, err := s.readCommit(c)
		if err != nil {
			return nil, 0, damaged(ref, head, c, err)
		}
		r := idxRec{time: ci.time, hash: c}
		ents := parseTrailers(ci.message)
		if olderKeptLocal(ci) {
			// Log reads what it drops as deletions: so does its bloom
			if ents, err = s.changedFrom(ci.parents[0], c, ents); err != nil {
				return nil, 0, err
			}
		}
		for _, e := range ents {
			r.bloom |= bloomBits(e.Path)
		}
		walked = append(walked, r)
		if len(walked) == 64 && len(recs) > 0 {
			// Not a fast-forward of the index: look the walked commits up
			// among all indexed ones.
			pos = make(map[plumbing.Hash]int, len(recs))
			for i, r := range recs {
				pos[r.hash] = i
			}
			for k, w := range walked {
				if p, ok := pos[w.hash]; ok {
					return join(p+1, k), -1, nil
				}
			}
		}
		if len(ci.parents) == 0 {
			recs = nil
			return join(0, len(walked)), -1, nil
		}
		if len(ci.parents) > 1 && from == nil {
			from = s.cameFrom(ref, last)
			for _, w := range walked[:len(walked)-1] {
				for _, o := range from[w.hash] {
					pending[o] = true
				}
			}
			for _, w := range walked {
				delete(pending, w.hash)
			}
		}
		for _, o := range from[c] {
			pending[o] = true
		}
		delete(pending, c)
		next := ci.parents[0]
		if n, ok := via[c]; ok {
			next = n // on the way to a commit the ref moved from, found below
		} else if !pending[next] {
			for _, p := range ci.parents[1:] {
				if pending[p] {
					next = p
					break
				}
			}
		}
		if next == ci.parents[0] && !pending[next] && len(ci.parents) > 1 {
			// A commit the ref moved from may lie further up another
			// parent: a third machine's merge took this one's work in
			// between (A merges C's merge of B's work; B fast-forwards).
			// Each such commit is looked for once, a bounded walk.
			targets := map[plumbing.Hash]bool{}
			for t := range pending {
				if !searched[t] {
					targets[t], searched[t] = true, true
				}
			}
			if len(targets) > 0 {
				for _, p := range ci.parents[1:] {
					if way := s.wayTo(p, targets, reachLimit); way != nil {
						// the chain goes down that way, through merges
						// further down too (four machines: the commit is
						// several second parents below)
						next = p
						for i := 0; i+1 < len(way); i++ {
							via[way[i]] = way[i+1]
						}
						break
					}
				}
			}
		}
		if next != ci.parents[0] {
			// Log lists what the merge changed from next: so does its bloom
			ents, err := s.changedFrom(next, c, nil)
			if err != nil {
				return nil, 0, err
			}
			for _, e := range ents {
				walked[len(walked)-1].bloom |= bloomBits(e.Path)
			}
		}
		c = next
	}
}

// olderKeptLocal reports whether ci is an older strata's commit of a machine
// with no history that kept local versions (keptLocalCommit: one parent,
// every block a sync add, kept local lines), whose trailers do not say what
// it changed from its parent.
func olderKeptLocal(ci commitInfo) bool {
	return len(ci.parents) == 1 && keptLocalCommit(ci.message)
}

// changedFrom lists what commit c changed from commit from, a parent of c
// other than its first: one entry per path whose blob differs, in path
// order, with the source, class and schema of c's own entry for the path
// (its trailers, ents) when it has one, else sync's. Callers hold s.mu.
func (s *Store) changedFrom(from, c plumbing.Hash, ents []state.Entry) ([]state.Entry, error) {
	was, err := s.commitFiles(from, "")
	if err != nil {
		return nil, err
	}
	now, err := s.commitFiles(c, "")
	if err != nil {
		return nil, err
	}
	own := map[string]state.Entry{}
	for _, e := range ents {
		own[e.Path] = e
	}
	var out []state.Entry
	for p, b := range now {
		if old, ok := was[p]; !ok || old != b {
			out = append(out, fromEntry(own, p, ok, state.ActionUpdate))
		}
	}
	for p := range was {
		if _, ok := now[p]; !ok {
			out = append(out, fromEntry(own, p, true, state.ActionDelete))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func fromEntry(own map[string]state.Entry, p string, existed bool, act state.Action) state.Entry {
	e, ok := own[p]
	if !ok {
		e = state.Entry{Path: p, Source: state.SourceSync}
	}
	if e.Action = act; !existed {
		e.Action = state.ActionAdd
	}
	return e
}

// reachLimit bounds the commits wayTo reads for one parent.
const reachLimit = 2000

// wayTo returns the commits from p down to the first of targets that p is
// or has as an ancestor, each the parent of the one before, found by a
// breadth-first walk of all parents over at most limit commits; nil when
// none is found. Callers hold s.mu.
func (s *Store) wayTo(p plumbing.Hash, targets map[plumbing.Hash]bool, limit int) []plumbing.Hash {
	child := map[plumbing.Hash]plumbing.Hash{p: p}
	queue := []plumbing.Hash{p}
	for len(queue) > 0 && len(child) <= limit {
		h := queue[0]
		queue = queue[1:]
		if targets[h] {
			var way []plumbing.Hash
			for ; h != p; h = child[h] {
				way = append(way, h)
			}
			way = append(way, p)
			slices.Reverse(way)
			return way
		}
		ci, err := s.readCommit(h)
		if err != nil {
			continue
		}
		for _, q := range ci.parents {
			if _, seen := child[q]; !seen {
				child[q] = h
				queue = append(queue, q)
			}
		}
	}
	return nil
}

// cameFrom reads ref's reflog: for each commit the ref was moved to, the
// commits it was moved from. When the ref's last indexed commit since is
// the target of an entry in the last 256 KiB, only those are read (the
// entries since then); else the whole file. No reflog gives an empty map.
func (s *Store) cameFrom(ref string, since plumbing.Hash) map[plumbing.Hash][]plumbing.Hash {
	from := map[plumbing.Hash][]plumbing.Hash{}
	f, err := openRegular(s.logFile(ref))
	if err != nil {
		return from
	}
	defer f.Close()
	const tail = 256 << 10
	var data []byte
	if fi, err := f.Stat(); err == nil && fi.Size() > tail && !since.IsZero() {
		data = make([]byte, tail)
		if n, _ := f.ReadAt(data, fi.Size()-tail); n == tail {
			if i := bytes.IndexByte(data, '\n'); i >= 0 && bytes.Contains(data[i:], []byte(" "+since.String()+" ")) {
				data = data[i+1:]
			} else {
				data = nil
			}
		} else {
			data = nil
		}
	}
	if data == nil {
		if data, err = io.ReadAll(io.LimitReader(f, 1<<30)); err != nil {
			return from
		}
	}
	for line := range bytes.Lines(data) {
		if o, n, ok := reflogMove(line); ok && o != n && !o.IsZero() {
			from[n] = append(from[n], o)
		}
	}
	return from
}

// persistIndex writes nix to file, appending when the file still holds
// exactly old's records, rewriting it otherwise. It is best effort: the
// index is a cache, so a failure only costs a walk next time. It returns
// the resulting file size, -1 when unknown. What it creates gets its mode
// from sh, so that every user of a shared repository can update the cache.
func persistIndex(file string, old, nix *refIndex, appendFrom int, sh gitperm.Shared) int64 {
	if err := sh.MkdirAll(filepath.Dir(file)); err != nil {
		return -1
	}
	// The lock keeps two processes from appending the same records twice.
	lock := file + ".lock"
	var lf *os.File
	for try := 0; ; try++ {
		var err error
		lf, err = sh.OpenFile(lock, os.O_WRONLY|os.O_EXCL)
		if err == nil {
			break
		}
		if try >= 20 {
			if fi, err := os.Stat(lock); err == nil && time.Since(fi.ModTime()) > time.Minute {
				os.Remove(lock) // left by a crashed process; the index is only a cache
			}
			return -1
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer func() { lf.Close(); os.Remove(lock) }()

	if appendFrom >= 0 && old.diskSize >= idxHeader && appendFrom == len(old.recs) &&
		old.diskSize == int64(idxHeader+len(old.recs)*idxRecSize) && fileEndsWith(file, old) {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.Write(encodeRecs(nix.recs[appendFrom:]))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				return int64(idxHeader + len(nix.recs)*idxRecSize)
			}
		}
	}
	var hdr [idxHeader]byte
	copy(hdr[:], idxMagic)
	binary.BigEndian.PutUint32(hdr[8:], idxVersion)
	binary.BigEndian.PutUint32(hdr[12:], idxRecSize)
	data := append(hdr[:], encodeRecs(nix.recs)...)
	if err := atomicfile.WriteUnsynced(file, data, sh.FixFile); err != nil {
		return -1 // a cache: read again from the history next time
	}
	return int64(len(data))
}

// fileEndsWith reports whether file's size and last record match ix.
func fileEndsWith(file string, ix *refIndex) bool {
	f, err := openRegular(file)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() != ix.diskSize {
		return false
	}
	if len(ix.recs) == 0 {
		return true
	}
	buf := make([]byte, idxRecSize)
	if _, err := f.ReadAt(buf, fi.Size()-idxRecSize); err != nil && err != io.EOF {
		return false
	}
	return bytes.Equal(buf, encodeRecs(ix.recs[len(ix.recs)-1:]))
}

// dropIndex forgets ref's index, in memory and on disk. Callers hold s.mu.
func (s *Store) dropIndex(ref string) {
	delete(s.indexes, ref)
	os.Remove(s.indexFile(ref))
}

// At returns the commit that was ref's head at time t: the latest commit of
// its first-parent chain whose committer time is not after t. It returns an
// error wrapping state.ErrNotFound when the ref does not exist or t is
// before its first commit.
func (s *Store) At(ref string, t time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.atFromFile(ref, t.Unix()); ok {
		if t.Nanosecond() == 0 {
			return h, nil
		}
		// a commit of t's own second stamped after t: the loaded index
		// steps back below
		if ci, err := s.readCommit(plumbing.NewHash(h)); err == nil && (ci.time != t.Unix() || !stampTime(ci).After(t)) {
			return h, nil
		}
	}
	for try := 0; ; try++ {
		ix, err := s.index(ref)
		if err != nil {
			return "", fmt.Errorf("at: %w", err)
		}
		ts := t.Unix()
		i := sort.Search(len(ix.sufMin), func(i int) bool { return ix.sufMin[i] > ts }) - 1
		if i < 0 {
			return "", fmt.Errorf("at %s: %s: %w", t.Format(time.RFC3339), ref, state.ErrNotFound)
		}
		r := ix.recs[i]
		// Check the cache against the commit it names; rebuild it once when
		// they disagree.
		ci, err := s.readCommit(r.hash)
		if err == nil && ci.time == r.time {
			// commit times are whole seconds; the Strata-Time trailer is
			// not: within t's own second, a commit stamped after t was
			// not the head yet
			for r.time == ts && t.Nanosecond() != 0 && stampTime(ci).After(t) {
				if i--; i < 0 {
					return "", fmt.Errorf("at %s: %s: %w", t.Format(time.RFC3339Nano), ref, state.ErrNotFound)
				}
				if r = ix.recs[i]; r.time < ts {
					return r.hash.String(), nil
				}
				if ci, err = s.readCommit(r.hash); err != nil {
					return "", fmt.Errorf("at: %w", err)
				}
			}
			return r.hash.String(), nil
		}
		if try > 0 {
			if err == nil {
				err = errors.New("index does not match history")
			}
			return "", fmt.Errorf("at: %w", err)
		}
		s.dropIndex(ref)
	}
}

// LogQuery filters Log (the type lives in state, beside state.Entry).
type LogQuery = state.LogQuery

// Log lists ref's entries newest first along its first-parent chain, one per
// recorded path per commit, as read from the commits' trailers. A missing ref
// gives an empty list.
func (s *Store) Log(ref string, q LogQuery) ([]state.Entry, error) {
	var out []state.Entry
	for e, err := range s.LogSeq(ref, q) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
	}
	return out, nil
}

// LogSeq yields what Log lists (q.Limit aside), one entry at a time, reading
// each commit only when the walk reaches it: a caller that stops early reads
// no older commit. The walk follows the chain as it was when it began. The
// store is locked only while a commit is read, never while the loop body
// runs, so the body may use the store. An error ends the sequence.
func (s *Store) LogSeq(ref string, q LogQuery) iter.Seq2[state.Entry, error] {
	return func(yield func(state.Entry, error) bool) {
		s.mu.Lock()
		ix, err := s.index(ref) // an index is never changed once made: a snapshot
		s.mu.Unlock()
		if err != nil {
			yield(state.Entry{}, logErr(err))
			return
		}
		var bloom uint64
		if q.Path != "" {
			bloom = bloomBits(q.Path)
		}
		// commit times are whole seconds: compared with Since's second, and
		// within it by the Strata-Time trailer below
		since := q.Since.Truncate(time.Second)
		for i := len(ix.recs) - 1; i >= 0; i-- {
			r := ix.recs[i]
			if !q.Since.IsZero() && time.Unix(ix.preMax[i], 0).Before(since) {
				return // every older commit is before Since too
			}
			ct := time.Unix(r.time, 0)
			if (!q.Since.IsZero() && ct.Before(since)) || (!q.Until.IsZero() && ct.After(q.Until)) {
				continue
			}
			if r.bloom&bloom != bloom {
				continue
			}
			s.mu.Lock()
			ci, err := s.readCommit(r.hash)
			s.mu.Unlock()
			if err != nil {
				yield(state.Entry{}, damaged(ref, ix.last(), r.hash, err))
				return
			}
			// a bound with a fraction of a second is held to it within its
			// second (a whole second, as git prints times, means all of it)
			if stamp := stampTime(ci); (!q.Until.IsZero() && q.Until.Nanosecond() != 0 && r.time == q.Until.Unix() && stamp.After(q.Until)) ||
				(!q.Since.IsZero() && q.Since.Nanosecond() != 0 && r.time == q.Since.Unix() && stamp.Before(q.Since)) {
				continue // within the bound's own second, on the wrong side of it
			}
			when := commitTime(ci)
			ents := parseTrailers(ci.message)
			if olderKeptLocal(ci) {
				// an older strata's kept local commit (keptLocalCommit): its
				// add blocks read its tree from nothing, and what it drops
				// from its parent is named only on kept local lines; what it
				// changed, read from the trees, shows each drop as the
				// deletion it is (attack25 recheck N2), so log PATH, blame and
				// restore PATH read it as any deletion
				s.mu.Lock()
				ents, err = s.changedFrom(ci.parents[0], r.hash, ents)
				s.mu.Unlock()
				if err != nil {
					yield(state.Entry{}, fmt.Errorf("log: %w", err))
					return
				}
			}
			if i > 0 && len(ci.parents) > 1 && ci.parents[0] != ix.recs[i-1].hash {
				// the other machine's merge, which this one's ref was
				// fast-forwarded to: its trailers say what changed from that
				// machine's side; here it changed what differs from the side
				// this ref stood at
				s.mu.Lock()
				ents, err = s.changedFrom(ix.recs[i-1].hash, r.hash, ents)
				s.mu.Unlock()
				if err != nil {
					yield(state.Entry{}, fmt.Errorf("log: %w", err))
					return
				}
			}
			if len(ents) == 0 && len(ci.parents) > 1 && q.Path == "" {
				// a merge that changed no path still happened: its decisions
				// (Decisions) say what it kept
				ents = []state.Entry{{Action: ActionMerge, Source: state.SourceSync}}
			}
			for _, e := range ents {
				if q.Path != "" && e.Path != q.Path {
					continue
				}
				e.Commit = r.hash.String()
				e.Time = when
				if i > 0 {
					e.Parent = ix.recs[i-1].hash.String()
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// commitTime returns the committer time in the committer's zone.
func commitTime(ci commitInfo) time.Time {
	t := time.Unix(ci.time, 0)
	if len(ci.tz) == 5 {
		if v, err := strconv.Atoi(ci.tz[1:]); err == nil {
			off := (v/100)*3600 + (v%100)*60
			if ci.tz[0] == '-' {
				off = -off
			}
			if off == 0 {
				return t.UTC()
			}
			t = t.In(time.FixedZone("", off))
		}
	}
	return t
}
