package odb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitperm"
)

// A batch collects the objects written between Begin and Flush so that they
// reach the disk together: as one pack and its index, the way
// `git fast-import` writes, instead of one loose file (and inode, and
// directory entry) per object.
//
// A batch of records makes one version of every directory above each
// changed file. When a tree comes in, the batch stores an older version of
// the same directory as a delta against it (deltify): it holds one whole
// copy of each directory (one per chain of maxPackDepth), not one per
// version, and the pack gets those deltas as they are. Whole, a batch of
// 1 000 changes to a directory of 1 000 files was 1 000 trees of ~45 KB in
// memory and to compress; as deltas, 1 000 instructions of ~30 bytes.
type batch struct {
	objs   []batchObj
	byHash map[plumbing.Hash]int
	recent map[string][]int // whole trees that may become deltas, newest first, by end name (deltify)
}

type batchObj struct {
	h     plumbing.Hash
	t     plumbing.ObjectType
	data  []byte // the content; nil when kept as a delta
	size  int    // the content's length
	delta []byte // with data nil: makes the content from objs[base]'s
	base  int    // a newer object of the batch
	chain int    // a whole tree: the longest chain of deltas that ends at it
}

// Begin starts a batch: until Flush or Abort, Write keeps objects in memory,
// where Read and Stat find them. Begin on a DB already in a batch keeps the
// batch.
func (db *DB) Begin() {
	if db.batch == nil {
		db.batch = &batch{byHash: map[plumbing.Hash]int{}, recent: map[string][]int{}}
	}
}

// Abort drops the batch's objects unwritten.
func (db *DB) Abort() { db.batch = nil }

// Flush ends the batch and writes its objects: loose when there are fewer
// than packMin (each a small file; no fsync unless fsync is set, as git
// leaves loose objects to the OS), otherwise as one pack with its index
// (both fsynced, as git's core.fsync default does for packs; with fsync the
// pack directory is synced too). When Flush returns nil every object is
// readable by git and by this DB.
func (db *DB) Flush(packMin int, fsync bool) error {
	b := db.batch
	db.batch = nil
	if b == nil || len(b.objs) == 0 {
		return nil
	}
	if db.Refuse != nil {
		return fmt.Errorf("write objects: %w", db.Refuse)
	}
	if len(b.objs) < packMin {
		for i, o := range b.objs {
			data, err := b.content(i)
			if err != nil {
				return err
			}
			if err := db.Write(o.t, data, o.h, fsync); err != nil {
				return err
			}
		}
		return nil
	}
	name, err := WritePack(filepath.Join(db.dir, "pack"), b.packObjects(), db.shared(), fsync)
	if err != nil {
		return err
	}
	// The reader sees the new pack at once, newest first.
	if p, err := openPack(name); err == nil && !db.seen[name] {
		db.seen[name] = true
		db.packs = append([]*pack{p}, db.packs...)
	}
	return nil
}

func (b *batch) packObjects() []PackObject {
	out := make([]PackObject, len(b.objs))
	for i, o := range b.objs {
		out[i] = PackObject{Hash: o.h, Type: o.t, Data: o.data, Delta: o.delta, Base: o.base}
	}
	return out
}

// add keeps an object in the batch; an object already there is not kept
// twice.
func (b *batch) add(t plumbing.ObjectType, data []byte, h plumbing.Hash) {
	if _, ok := b.byHash[h]; ok {
		return
	}
	b.byHash[h] = len(b.objs)
	b.objs = append(b.objs, batchObj{h: h, t: t, data: data, size: len(data)})
	if t == plumbing.TreeObject {
		b.deltify(len(b.objs) - 1)
	}
}

// deltify stores a whole older tree that is probably a version of the same
// directory as tree i as a delta against it. The candidates are the last few
// whole trees whose first entry has the same name and those whose last entry
// does (a file added at one end of a directory keeps the other end); the
// smallest delta under half of the older tree wins. A tree whose chain is
// maxPackDepth long stays whole, as git's own packs bound their chains.
func (b *batch) deltify(i int) {
	n := &b.objs[i]
	first, last, ok := treeEnds(n.data)
	if !ok {
		return
	}
	keys := [2]string{"<" + first, ">" + last}
	best, bestDelta := -1, []byte(nil)
	for _, k := range keys {
		for _, c := range b.recent[k] {
			o := b.objs[c]
			if o.data == nil || o.chain >= maxPackDepth || c == best {
				continue
			}
			d := EncodeDelta(n.data, o.data)
			if d != nil && len(d) > 64+len(o.data)/16 {
				// more than one entry's change: the walk by entries finds
				// changes far apart (EncodeTreeDelta)
				if td := EncodeTreeDelta(n.data, o.data); td != nil && len(td) < len(d) {
					d = td
				}
			}
			if d != nil && len(d) < len(o.data)/2 && (bestDelta == nil || len(d) < len(bestDelta)) {
				best, bestDelta = c, d
			}
		}
	}
	if bestDelta != nil {
		o := &b.objs[best]
		n.chain = o.chain + 1
		o.data, o.delta, o.base = nil, bestDelta, i
	}
	for _, k := range keys {
		c := make([]int, 1, deltaCandidates)
		c[0] = i
		for _, j := range b.recent[k] {
			if len(c) < deltaCandidates && b.objs[j].data != nil {
				c = append(c, j)
			}
		}
		b.recent[k] = c
	}
}

// deltaCandidates is how many trees deltify tries per end name: enough for
// a few directories whose first (or last) entries share a name.
const deltaCandidates = 4

// index returns the position of object h in the batch.
func (b *batch) index(h plumbing.Hash) (int, bool) {
	if b == nil {
		return 0, false
	}
	i, ok := b.byHash[h]
	return i, ok
}

// content returns object i's content, applying the deltas from the whole
// tree its chain ends at (at most maxPackDepth of them).
func (b *batch) content(i int) ([]byte, error) {
	o := b.objs[i]
	if o.data != nil || o.delta == nil {
		return o.data, nil
	}
	base, err := b.content(o.base)
	if err != nil {
		return nil, err
	}
	data, err := ApplyDelta(base, o.delta)
	if err != nil || len(data) != o.size {
		return nil, fmt.Errorf("batch object %s: delta does not apply (%v)", o.h, err)
	}
	return data, nil
}

// PackObject is one object for WritePack; Hash is its git object id. Data
// is the content, or nil when Delta makes the content from that of
// objs[Base], a newer object (one later in objs).
type PackObject struct {
	Hash  plumbing.Hash
	Type  plumbing.ObjectType
	Data  []byte
	Delta []byte
	Base  int
}

// WritePack writes objs (in the order they were made; the deltas among
// them, trees as deltas against newer versions of themselves, as they are:
// git gc makes the other deltas when it repacks) as a version-2 pack and
// its version-2 index into dir, and returns the index's path. As git
// fast-import does: the pack and the index are written under temporary
// names in dir and fsynced, then the pack is renamed to
// pack-<checksum>.pack and the index to pack-<checksum>.idx last, so that a
// reader that finds the index finds the whole pack. Both are read-only, sh
// applied, as git's packs. With dirSync the directory is synced after the
// renames.
func WritePack(dir string, objs []PackObject, sh gitperm.Shared, dirSync bool) (string, error) {
	if len(objs) == 0 {
		return "", errors.New("write pack: no objects")
	}
	if uint64(len(objs)) > 1<<32-1 {
		return "", errors.New("write pack: too many objects")
	}
	var buf bytes.Buffer
	buf.Grow(packHeader + 64*len(objs))
	buf.WriteString("PACK")
	binary.Write(&buf, binary.BigEndian, uint32(2))
	binary.Write(&buf, binary.BigEndian, uint32(len(objs)))
	type idxEnt struct {
		h   plumbing.Hash
		crc uint32
		off uint64
	}
	ents := make([]idxEnt, len(objs))
	z := zBest.Get().(*zlib.Writer)
	defer zBest.Put(z)
	// Objects go in newest first (objs come in the order they were made),
	// so that a delta's base, a newer object, is in the pack before it and
	// the delta names it by its distance back (an offset delta).
	offs := make([]int64, len(objs))
	var hdr [16]byte
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		start := buf.Len()
		offs[i] = int64(start)
		data := o.Data
		if o.Delta != nil {
			if o.Base <= i || o.Base >= len(objs) {
				return "", fmt.Errorf("write pack: object %s: delta base %d is not a newer object", o.Hash, o.Base)
			}
			buf.Write(packEntryHeader(hdr[:0], plumbing.OFSDeltaObject, int64(len(o.Delta))))
			buf.Write(appendOfsDelta(hdr[:0], uint64(offs[i]-offs[o.Base])))
			data = o.Delta
		} else {
			buf.Write(packEntryHeader(hdr[:0], o.Type, int64(len(o.Data))))
		}
		z.Reset(&buf)
		if _, err := z.Write(data); err != nil {
			return "", fmt.Errorf("write pack: %w", err)
		}
		if err := z.Close(); err != nil {
			return "", fmt.Errorf("write pack: %w", err)
		}
		ents[i] = idxEnt{h: o.Hash, crc: crc32.ChecksumIEEE(buf.Bytes()[start:]), off: uint64(start)}
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])

	sort.Slice(ents, func(i, j int) bool { return bytes.Compare(ents[i].h[:], ents[j].h[:]) < 0 })
	var ix bytes.Buffer
	ix.Grow(idxHeader + len(ents)*(hashLen+8) + 2*hashLen)
	ix.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range ents {
		fan[e.h[0]]++
	}
	for i, n := uint32(0), 0; n < 256; n++ {
		i += fan[n]
		binary.Write(&ix, binary.BigEndian, i)
	}
	for i, e := range ents {
		if i > 0 && e.h == ents[i-1].h {
			return "", fmt.Errorf("write pack: object %s twice", e.h)
		}
		ix.Write(e.h[:])
	}
	for _, e := range ents {
		binary.Write(&ix, binary.BigEndian, e.crc)
	}
	var large []uint64
	for _, e := range ents {
		if e.off < 1<<31 {
			binary.Write(&ix, binary.BigEndian, uint32(e.off))
			continue
		}
		binary.Write(&ix, binary.BigEndian, uint32(1<<31|len(large)))
		large = append(large, e.off)
	}
	for _, off := range large {
		binary.Write(&ix, binary.BigEndian, off)
	}
	ix.Write(sum[:])
	isum := sha1.Sum(ix.Bytes())
	ix.Write(isum[:])

	base := filepath.Join(dir, "pack-"+hex.EncodeToString(sum[:]))
	tag := strconv.Itoa(os.Getpid()) + "_" + strconv.FormatUint(tmpSeq.Add(1), 10)
	tmpPack := filepath.Join(dir, "tmp_pack_strata_"+tag)
	tmpIdx := filepath.Join(dir, "tmp_idx_strata_"+tag)
	if err := writeSynced(tmpPack, buf.Bytes(), sh); err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	if err := writeSynced(tmpIdx, ix.Bytes(), sh); err != nil {
		os.Remove(tmpPack)
		return "", fmt.Errorf("write pack: %w", err)
	}
	// An existing pack of the same name holds the same objects: keep it.
	if err := os.Rename(tmpPack, base+".pack"); err != nil {
		os.Remove(tmpPack)
		os.Remove(tmpIdx)
		return "", fmt.Errorf("write pack: %w", err)
	}
	if err := os.Rename(tmpIdx, base+".idx"); err != nil {
		os.Remove(tmpIdx)
		return "", fmt.Errorf("write pack: %w", err)
	}
	if dirSync {
		if d, err := os.Open(dir); err == nil {
			err = d.Sync()
			d.Close()
			if err != nil {
				return "", fmt.Errorf("write pack: %w", err)
			}
		}
	}
	return base + ".idx", nil
}

// maxPackDepth is the longest delta chain a batch makes: git's default
// (pack.depth) for its own packs.
const maxPackDepth = 50

// treeEnds returns the names of a tree's first and last entries; ok is
// false for an empty or malformed tree.
func treeEnds(data []byte) (first, last string, ok bool) {
	var f, l []byte
	for len(data) > 0 {
		_, name, _, rest, err := nextEntry(data)
		if err != nil {
			return "", "", false
		}
		if f == nil {
			f = name
		}
		l, data = name, rest
	}
	if f == nil {
		return "", "", false
	}
	return string(f), string(l), true
}

// appendOfsDelta appends an offset delta's distance back to its base, as
// git writes it: big-endian base-128 with one added to each byte but the
// last (the pack reader's header undoes it).
func appendOfsDelta(b []byte, rel uint64) []byte {
	var tmp [10]byte
	i := len(tmp) - 1
	tmp[i] = byte(rel & 0x7f)
	for rel >>= 7; rel != 0; rel >>= 7 {
		rel--
		i--
		tmp[i] = 0x80 | byte(rel&0x7f)
	}
	return append(b, tmp[i:]...)
}

// packEntryHeader appends a pack entry's header: the type and the size in a
// little-endian base-128 varint, 4 bits in the first byte.
func packEntryHeader(b []byte, t plumbing.ObjectType, size int64) []byte {
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(b, c)
}

// writeSynced creates path (read-only, as git's packs are, sh applied)
// holding data and fsyncs it; missing parents are created.
func writeSynced(path string, data []byte, sh gitperm.Shared) error {
	f, err := CreateExcl(path, gitperm.Object, sh)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
