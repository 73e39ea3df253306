package odb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// A pack is read through its version-2 index: go-git's storage loads every
// pack index into a map on its first look-up, which costs a one-shot command
// like `strata show --at` ~100 ms on a 100 000-commit history; this reader
// binary-searches the index file's fan-out bucket instead. A version-1 index
// (git before 1.5.2 wrote them; git still reads them) interleaves each
// name with its offset: it is read whole when the pack is opened, into the
// name and offset tables a version-2 index's look-ups load after a while.

type pack struct {
	name     string
	idx      io.ReaderAt
	data     io.ReaderAt // a mem when the pack file is mapped
	unmap    func()      // releases a mapped pack's memory
	unmapIdx func()      // releases a mapped index's memory
	dataSize int64
	idxSize  int64
	fanout   [256]uint32
	n        uint32 // objects in the pack
	nlarge   int64  // entries of the large-offset table
	hits     int    // look-ups so far
	names    []byte // the whole sorted name table, loaded after many look-ups
	offsets  []byte // the whole 4-byte offset table, loaded with names
}

// namesAfter is how many look-ups a pack serves from its index file before
// its name table is loaded whole: one-shot commands read a few 20-byte
// buckets, a walk of 100 000 commits reads the table once.
const namesAfter = 256

const (
	idxHeader  = 8 + 256*4 // magic, version, fan-out table
	packHeader = 12        // "PACK", version, object count
	hashLen    = 20
)

var errIndex = errors.New("not a valid pack index")

// idxV2Magic starts a version-2 index; an index without it is version 1.
var idxV2Magic = []byte{0xff, 't', 'O', 'c'}

func openPack(idxName string) (*pack, error) {
	idx, err := os.Open(idxName)
	if err != nil {
		return nil, err
	}
	data, err := os.Open(idxName[:len(idxName)-len(".idx")] + ".pack")
	if err != nil {
		idx.Close()
		return nil, err
	}
	p, err := newPackFiles(idx, data)
	if err != nil {
		idx.Close()
		data.Close()
		return nil, fmt.Errorf("%s: %w", idxName, err)
	}
	p.name = idxName
	// A mapped pack is read in place: no system call and no copy into a
	// buffer per object (a third of a commit's read in a walk of 10 000).
	// So is a mapped index until its name table is loaded (namesAfter): a
	// look-up binary-searches its fan-out bucket where it lies, touching a
	// few pages, instead of reading it into new memory (30 KB in a pack of
	// 400 000 objects; on a machine where a page fault is dear, a few
	// hundred microseconds of every one-shot command). Where mapping fails,
	// the files are read as they are.
	if m, unmap, ok := mapFile(data, p.dataSize); ok {
		data.Close()
		p.data, p.unmap = m, unmap
	}
	if m, unmap, ok := mapFile(idx, p.idxSize); ok {
		idx.Close()
		p.idx, p.unmapIdx = m, unmap
	}
	return p, nil
}

// mem is pack data held in memory, read in place by entryAt.
type mem []byte

func (m mem) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(m)) {
		return 0, io.EOF
	}
	n := copy(b, m[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func newPackFiles(idx, data *os.File) (*pack, error) {
	ist, err := idx.Stat()
	if err != nil {
		return nil, err
	}
	dst, err := data.Stat()
	if err != nil {
		return nil, err
	}
	return newPack(idx, ist.Size(), data, dst.Size())
}

// newPack checks an index and its pack: the index's header, that its
// fan-out table never decreases, that its size is exactly what its object
// count and large-offset table take, and that the pack's header names the
// same count. Offsets are checked at each look-up.
func newPack(idx io.ReaderAt, idxSize int64, data io.ReaderAt, dataSize int64) (*pack, error) {
	var hdr [idxHeader]byte
	if _, err := idx.ReadAt(hdr[:], 0); err != nil {
		return nil, errIndex
	}
	v1 := !bytes.Equal(hdr[:4], idxV2Magic)
	if !v1 && !bytes.Equal(hdr[4:8], []byte{0, 0, 0, 2}) {
		return nil, fmt.Errorf("pack index version %d", binary.BigEndian.Uint32(hdr[4:8]))
	}
	fan := hdr[8:]
	if v1 {
		fan = hdr[:256*4]
	}
	p := &pack{idx: idx, idxSize: idxSize, data: data, dataSize: dataSize}
	prev := uint32(0)
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(fan[4*i:])
		if p.fanout[i] < prev {
			return nil, errIndex
		}
		prev = p.fanout[i]
	}
	p.n = p.fanout[255]
	if v1 {
		if err := p.readV1(); err != nil {
			return nil, err
		}
	} else {
		// names, CRCs, 4-byte offsets, then the large offsets, then the
		// pack's and the index's checksums.
		fixed := int64(idxHeader) + int64(p.n)*(hashLen+4+4) + 2*hashLen
		if idxSize < fixed || (idxSize-fixed)%8 != 0 || (idxSize-fixed)/8 > int64(p.n) {
			return nil, errIndex
		}
		p.nlarge = (idxSize - fixed) / 8
	}
	var ph [packHeader]byte
	if _, err := data.ReadAt(ph[:], 0); err != nil || !bytes.Equal(ph[:4], []byte("PACK")) {
		return nil, errors.New("not a pack")
	}
	if v := binary.BigEndian.Uint32(ph[4:]); v != 2 && v != 3 {
		return nil, fmt.Errorf("pack version %d", v)
	}
	if binary.BigEndian.Uint32(ph[8:]) != p.n {
		return nil, errors.New("pack and index disagree on the object count")
	}
	return p, nil
}

// readV1 reads a version-1 index whole: after its fan-out table, one
// 4-byte offset and one name per object, then the pack's and the index's
// checksums, and nothing else (offsets past 2 GiB need version 2). Its
// size is checked against the object count before anything is allocated.
func (p *pack) readV1() error {
	const fan, rec = 256 * 4, 4 + hashLen
	if p.idxSize != fan+int64(p.n)*rec+2*hashLen {
		return errIndex
	}
	recs := make([]byte, int64(p.n)*rec)
	if _, err := p.idx.ReadAt(recs, fan); err != nil {
		return errIndex
	}
	p.names = make([]byte, int(p.n)*hashLen)
	p.offsets = make([]byte, int(p.n)*4)
	for i := 0; i < int(p.n); i++ {
		r := recs[i*rec:]
		copy(p.offsets[i*4:i*4+4], r[:4])
		copy(p.names[i*hashLen:(i+1)*hashLen], r[4:rec])
	}
	return nil
}

// close closes the pack's files (a pack read from memory has none) and
// unmaps a mapped one: no entry of it may be being read.
func (p *pack) close() {
	for _, r := range []io.ReaderAt{p.idx, p.data} {
		if c, ok := r.(io.Closer); ok {
			c.Close()
		}
	}
	if p.unmap != nil {
		p.unmap()
		p.unmap, p.data = nil, nil
	}
	if p.unmapIdx != nil {
		p.unmapIdx()
		p.unmapIdx, p.idx = nil, nil
	}
}

// lookup is offset for a pack whose index may be mapped: a fault from the
// file cut short under the mapping is an error (guard).
func (p *pack) lookup(h plumbing.Hash) (off int64, ok bool, err error) {
	defer guard(&err)()
	return p.offset(h)
}

// bucket returns the sorted names of the index's entries lo to hi: from
// the loaded name table, in place in a mapped index, or read from the file.
// Reading a mapped index can fault (guard).
func (p *pack) bucket(lo, hi uint32) ([]byte, error) {
	if p.names != nil {
		return p.names[int(lo)*hashLen : int(hi)*hashLen], nil
	}
	if m, ok := p.idx.(mem); ok {
		return m[idxHeader+int64(lo)*hashLen : idxHeader+int64(hi)*hashLen], nil
	}
	names := make([]byte, int(hi-lo)*hashLen)
	if _, err := p.idx.ReadAt(names, idxHeader+int64(lo)*hashLen); err != nil {
		return nil, err
	}
	return names, nil
}

// between returns the names of the pack's objects from lo to hi
// (inclusive); a fault from a mapped index cut short is an error (guard).
func (p *pack) between(lo, hi plumbing.Hash) (out []plumbing.Hash, err error) {
	defer guard(&err)()
	first := uint32(0)
	if lo[0] > 0 {
		first = p.fanout[lo[0]-1]
	}
	last := p.fanout[lo[0]]
	if last <= first {
		return nil, nil
	}
	names, err := p.bucket(first, last)
	if err != nil {
		return nil, err
	}
	n := int(last - first)
	k := sort.Search(n, func(i int) bool { return bytes.Compare(names[i*hashLen:(i+1)*hashLen], lo[:]) >= 0 })
	for ; k < n && bytes.Compare(names[k*hashLen:(k+1)*hashLen], hi[:]) <= 0; k++ {
		var h plumbing.Hash
		copy(h[:], names[k*hashLen:])
		out = append(out, h)
	}
	return out, nil
}

// offset finds h in the pack's index.
func (p *pack) offset(h plumbing.Hash) (int64, bool, error) {
	lo := uint32(0)
	if h[0] > 0 {
		lo = p.fanout[h[0]-1]
	}
	hi := p.fanout[h[0]]
	if hi <= lo {
		return 0, false, nil
	}
	p.hits++
	if p.names == nil && p.hits > namesAfter {
		all := make([]byte, int(p.n)*hashLen)
		offs := make([]byte, int(p.n)*4)
		if _, err := p.idx.ReadAt(all, idxHeader); err == nil {
			if _, err := p.idx.ReadAt(offs, p.offTable()); err == nil {
				p.names, p.offsets = all, offs
			}
		}
	}
	names, err := p.bucket(lo, hi)
	if err != nil {
		return 0, false, err
	}
	k := sort.Search(int(hi-lo), func(i int) bool { return bytes.Compare(names[i*hashLen:i*hashLen+hashLen], h[:]) >= 0 })
	if k == int(hi-lo) || !bytes.Equal(names[k*hashLen:k*hashLen+hashLen], h[:]) {
		return 0, false, nil
	}
	off, err := p.offsetAt(int64(lo) + int64(k))
	return off, err == nil, err
}

// offsetAt returns the pack offset of the index's entry pos: a 4-byte
// offset, or with its top bit set the position of an 8-byte one in the
// large-offset table.
func (p *pack) offsetAt(pos int64) (int64, error) {
	offTable := p.offTable()
	var b [8]byte
	if p.offsets != nil {
		copy(b[:4], p.offsets[pos*4:])
	} else if _, err := p.idx.ReadAt(b[:4], offTable+pos*4); err != nil {
		return 0, err
	}
	off := int64(binary.BigEndian.Uint32(b[:4]))
	if off&0x80000000 != 0 {
		k := off & 0x7fffffff
		if k >= p.nlarge {
			return 0, errors.New("large offset out of the index's table")
		}
		if _, err := p.idx.ReadAt(b[:], offTable+int64(p.n)*4+k*8); err != nil {
			return 0, err
		}
		u := binary.BigEndian.Uint64(b[:])
		if u > 1<<62 {
			return 0, errors.New("pack offset out of range")
		}
		off = int64(u)
	}
	if off < packHeader || off >= p.dataSize-hashLen {
		return 0, errors.New("pack offset out of range")
	}
	return off, nil
}

// offTable is where the index's 4-byte offset table starts: after the
// fan-out, the names and the CRCs.
func (p *pack) offTable() int64 { return int64(idxHeader) + int64(p.n)*(hashLen+4) }

// entry is the header of one pack entry.
type entry struct {
	typ     plumbing.ObjectType
	size    int64         // of the object, or of the delta for a delta
	baseOff int64         // an offset delta's base
	base    plumbing.Hash // a ref delta's base
	r       byteReader    // positioned at the entry's zlib data
}

// byteReader is what zlib reads without a buffer of its own.
type byteReader interface {
	io.Reader
	io.ByteReader
}

// entryReaders are the buffered readers of entries done with (release), and
// memReaders the readers of entries of a pack in memory.
var entryReaders, memReaders sync.Pool

// release gives e's reader back for another entry; e.r is not to be used
// after it.
func (e *entry) release() {
	switch r := e.r.(type) {
	case *bufio.Reader:
		entryReaders.Put(r)
	case *bytes.Reader:
		r.Reset(nil) // no reference into the pack's memory is kept
		memReaders.Put(r)
	}
	e.r = nil
}

// reader returns a reader of the pack's data from off to the end of its
// entries.
func (p *pack) reader(off, avail int64) byteReader {
	if m, ok := p.data.(mem); ok {
		r, _ := memReaders.Get().(*bytes.Reader)
		if r == nil {
			r = new(bytes.Reader)
		}
		r.Reset(m[off : off+avail])
		return r
	}
	sr := io.NewSectionReader(p.data, off, avail)
	br, _ := entryReaders.Get().(*bufio.Reader)
	if br == nil {
		return bufio.NewReaderSize(sr, 4096)
	}
	br.Reset(sr)
	return br
}

// entryAt reads the header of the entry at off.
func (p *pack) entryAt(off int64) (entry, error) {
	avail := p.dataSize - hashLen - off
	if off < 0 || avail <= 0 {
		return entry{}, errors.New("pack offset out of range")
	}
	br := p.reader(off, avail)
	e, err := p.header(br, off, avail)
	if err != nil {
		(&entry{r: br}).release()
	}
	return e, err
}

// header reads the header of the entry at off from br.
func (p *pack) header(br byteReader, off, avail int64) (entry, error) {
	c, err := br.ReadByte()
	if err != nil {
		return entry{}, err
	}
	e := entry{typ: plumbing.ObjectType((c >> 4) & 7), size: int64(c & 15), r: br}
	used := int64(1)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return entry{}, errors.New("pack entry size too large")
		}
		if c, err = br.ReadByte(); err != nil {
			return entry{}, err
		}
		used++
		e.size |= int64(c&0x7f) << shift
	}
	switch e.typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		c, err := br.ReadByte()
		if err != nil {
			return entry{}, err
		}
		used++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if rel >= 1<<48 {
				return entry{}, errors.New("delta base offset too large")
			}
			if c, err = br.ReadByte(); err != nil {
				return entry{}, err
			}
			used++
			rel = ((rel + 1) << 7) | int64(c&0x7f)
		}
		if rel <= 0 || off-rel < packHeader {
			return entry{}, errors.New("delta base offset out of range")
		}
		e.baseOff = off - rel
	case plumbing.REFDeltaObject:
		if _, err := io.ReadFull(br, e.base[:]); err != nil {
			return entry{}, err
		}
		used += hashLen
	default:
		return entry{}, fmt.Errorf("pack object type %d", e.typ)
	}
	if !fits(e.size, avail-used) {
		return entry{}, errors.New("pack entry size larger than its data can hold")
	}
	return e, nil
}

func (e entry) isDelta() bool {
	return e.typ == plumbing.OFSDeltaObject || e.typ == plumbing.REFDeltaObject
}

// readPacked reads the object at off, resolving deltas, into into's
// storage when it fits; an object larger than limit (when limit >= 0) is
// refused before its content is inflated.
func (db *DB) readPacked(p *pack, off, limit int64, depth int, into []byte) (plumbing.ObjectType, []byte, error) {
	if depth > maxDeltaDepth {
		return 0, nil, errors.New("delta chain too long")
	}
	e, err := p.entryAt(off)
	if err != nil {
		return 0, nil, err
	}
	if !e.isDelta() {
		if limit >= 0 && e.size > limit {
			e.release()
			return 0, nil, &TooLargeError{Size: e.size, Limit: limit}
		}
		data, err := inflateInto(e.r, e.size, into)
		e.release()
		return e.typ, data, err
	}
	delta, err := inflateInto(e.r, e.size, db.deltaBuf(depth))
	e.release()
	if err != nil {
		return 0, nil, err
	}
	defer db.keepDeltaBuf(depth, delta)
	if limit >= 0 {
		_, dst, _, err := deltaSizes(delta)
		if err != nil {
			return 0, nil, err
		}
		if dst > limit {
			return 0, nil, &TooLargeError{Size: dst, Limit: limit}
		}
	}
	var (
		baseType plumbing.ObjectType
		base     []byte
	)
	if e.typ == plumbing.REFDeltaObject {
		if baseType, base, err = db.top().read(e.base, -1, depth+1, nil); err != nil {
			return 0, nil, err
		}
	} else {
		k := baseKey{p, e.baseOff}
		if b, ok := db.bases[k]; ok {
			baseType, base = b.typ, b.data
		} else {
			if baseType, base, err = db.readPacked(p, e.baseOff, -1, depth+1, db.takeBase()); err != nil {
				return 0, nil, err
			}
			// counted by capacity: a buffer taken from a dropped base may
			// be larger than the base it now holds
			if db.bytes+cap(base) > baseBytes {
				// the cache starts over; its buffers, which no caller
				// holds, serve the bases read next
				db.baseFree = db.baseFree[:0]
				for _, b := range db.bases {
					db.baseFree = append(db.baseFree, b.data)
				}
				clear(db.bases)
				db.bytes = 0
			}
			db.bases[k] = baseObj{baseType, base}
			db.bytes += cap(base)
		}
	}
	out, err := applyDeltaInto(base, delta, into)
	return baseType, out, err
}

// deltaBuf returns the buffer for the delta read at depth of a chain (a
// read of the base below it, at depth+1, uses another), or nil; the
// delta's instructions are spent once applied, so every delta read at that
// depth reuses it (keepDeltaBuf).
func (db *DB) deltaBuf(depth int) []byte {
	if depth < len(db.deltaBufs) {
		return db.deltaBufs[depth]
	}
	return nil
}

// keepDeltaBuf keeps buf, once its delta is applied, for the next delta read
// at depth, unless it is larger than a delta of ordinary files or the depth
// deeper than git makes chains (50; 250 with --aggressive): a hostile
// pack's chain of 10 000 deltas would keep 10 000 buffers for the DB's life.
func (db *DB) keepDeltaBuf(depth int, buf []byte) {
	if cap(buf) > deltaBufMax || depth >= deltaBufDepths {
		return
	}
	for len(db.deltaBufs) <= depth {
		db.deltaBufs = append(db.deltaBufs, nil)
	}
	db.deltaBufs[depth] = buf[:0]
}

const (
	deltaBufMax    = 64 << 10
	deltaBufDepths = 256
)

// takeBase returns a free buffer of the delta-base cache, or nil.
func (db *DB) takeBase() []byte {
	n := len(db.baseFree)
	if n == 0 {
		return nil
	}
	b := db.baseFree[n-1]
	db.baseFree[n-1] = nil
	db.baseFree = db.baseFree[:n-1]
	return b
}

// statPacked returns the type and size of the object at off from headers:
// a delta's size is the result size at the head of its delta data (the
// first few bytes inflated), its type that of the end of its chain.
func (db *DB) statPacked(p *pack, off int64, depth int) (plumbing.ObjectType, int64, error) {
	e, err := p.entryAt(off)
	if err != nil {
		return 0, 0, err
	}
	if !e.isDelta() {
		e.release()
		return e.typ, e.size, nil
	}
	z, err := inflater(e.r)
	if err != nil {
		e.release()
		return 0, 0, err
	}
	var head [20]byte // two sizes of at most 10 bytes each
	n, err := io.ReadFull(z, head[:min(int64(len(head)), e.size)])
	zReaders.Put(z)
	e.release()
	if err != nil {
		return 0, 0, err
	}
	_, size, _, err := deltaSizes(head[:n])
	if err != nil {
		return 0, 0, err
	}
	t, err := db.chainType(p, e, depth+1)
	return t, size, err
}

// chainType follows a delta's bases to the first entry that is not a delta,
// reading headers only.
func (db *DB) chainType(p *pack, e entry, depth int) (plumbing.ObjectType, error) {
	for ; depth <= maxDeltaDepth; depth++ {
		if e.typ == plumbing.REFDeltaObject {
			t, _, err := db.top().stat(e.base, depth)
			return t, err
		}
		var err error
		if e, err = p.entryAt(e.baseOff); err != nil {
			return 0, err
		}
		e.release() // only its header is read
		if !e.isDelta() {
			return e.typ, nil
		}
	}
	return 0, errors.New("delta chain too long")
}
