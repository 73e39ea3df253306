package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// A small reader for loose objects and version-2 pack indexes, used for
// strata's own reads (commits, trees, blobs by hash). go-git's storage loads
// every pack index into a map on its first look-up, which costs a one-shot
// command like `strata show --at` ~100 ms on a 100 000-commit history; this
// reader binary-searches the index file's fan-out bucket instead. Anything it
// cannot read (an idx v1, alternates, a corrupt pack) falls back to go-git.

// errNoObject means the fast reader did not find the object; the caller
// falls back to go-git, which reports the final answer.
var errNoObject = errors.New("object not in the fast reader")

type packFile struct {
	name   string
	idx    *os.File
	pack   *os.File
	fanout [256]uint32
	n      uint32
	hits   int    // look-ups so far
	names  []byte // the whole sorted name table, loaded after many look-ups
}

// namesAfter is how many look-ups a pack serves from its index file before
// its name table is loaded whole: one-shot commands read a few 20-byte
// buckets, a walk of 100 000 commits reads the table once.
const namesAfter = 256

// objectReader reads objects of one object directory. Callers hold s.mu.
type objectReader struct {
	dir   string // <commondir>/objects
	packs []*packFile
	seen  map[string]bool
	bases map[baseKey]baseObj // resolved delta bases, bounded by baseBytes
	bytes int
}

type baseKey struct {
	pack *packFile
	off  int64
}

type baseObj struct {
	typ  plumbing.ObjectType
	data []byte
}

// baseBytes bounds the delta-base cache.
const baseBytes = 16 << 20

func newObjectReader(objects string) *objectReader {
	return &objectReader{dir: objects, seen: map[string]bool{}, bases: map[baseKey]baseObj{}}
}

// rescan opens packs that appeared since the last scan. Packs that git
// repacked away stay readable through their open descriptors.
func (r *objectReader) rescan() {
	names, _ := filepath.Glob(filepath.Join(r.dir, "pack", "pack-*.idx"))
	for _, idxName := range names {
		if r.seen[idxName] {
			continue
		}
		p, err := openPack(idxName)
		if err != nil {
			continue // unreadable or not v2: go-git gets those
		}
		r.seen[idxName] = true
		r.packs = append(r.packs, p)
	}
	// Newest packs first: recently written objects are looked up most.
	sort.SliceStable(r.packs, func(i, j int) bool { return r.packs[i].name > r.packs[j].name })
}

func openPack(idxName string) (*packFile, error) {
	idx, err := os.Open(idxName)
	if err != nil {
		return nil, err
	}
	var hdr [8 + 256*4]byte
	if _, err := io.ReadFull(idx, hdr[:]); err != nil || !bytes.Equal(hdr[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		idx.Close()
		return nil, errors.New("not a v2 pack index")
	}
	pack, err := os.Open(idxName[:len(idxName)-len(".idx")] + ".pack")
	if err != nil {
		idx.Close()
		return nil, err
	}
	p := &packFile{name: idxName, idx: idx, pack: pack}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(hdr[8+4*i:])
	}
	p.n = p.fanout[255]
	return p, nil
}

// offset finds h in the pack's index.
func (p *packFile) offset(h plumbing.Hash) (int64, bool, error) {
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
		all := make([]byte, int(p.n)*20)
		if _, err := p.idx.ReadAt(all, int64(8+256*4)); err == nil {
			p.names = all
		}
	}
	var names []byte
	if p.names != nil {
		names = p.names[int(lo)*20 : int(hi)*20]
	} else {
		names = make([]byte, int(hi-lo)*20)
		if _, err := p.idx.ReadAt(names, int64(8+256*4)+int64(lo)*20); err != nil {
			return 0, false, err
		}
	}
	k := sort.Search(int(hi-lo), func(i int) bool { return bytes.Compare(names[i*20:i*20+20], h[:]) >= 0 })
	if k == int(hi-lo) || !bytes.Equal(names[k*20:k*20+20], h[:]) {
		return 0, false, nil
	}
	pos := int64(lo) + int64(k)
	offTable := int64(8+256*4) + int64(p.n)*24 // after names and CRCs
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], offTable+pos*4); err != nil {
		return 0, false, err
	}
	off := binary.BigEndian.Uint32(b[:4])
	if off&0x80000000 == 0 {
		return int64(off), true, nil
	}
	large := offTable + int64(p.n)*4 + int64(off&0x7fffffff)*8
	if _, err := p.idx.ReadAt(b[:], large); err != nil {
		return 0, false, err
	}
	return int64(binary.BigEndian.Uint64(b[:])), true, nil
}

// read returns the object h from the loose files or the packs, or
// errNoObject.
func (r *objectReader) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	// Packs first: after the first few hundred look-ups a pack's name table
	// is in memory and a miss costs no syscall, while a loose miss costs a
	// failed open.
	if r.packs == nil {
		r.rescan()
	}
	if t, data, ok := r.readFromPacks(h); ok {
		return t, data, nil
	}
	if t, data, err := r.readLoose(h); err == nil {
		return t, data, nil
	}
	r.rescan() // a git gc may have packed it since
	if t, data, ok := r.readFromPacks(h); ok {
		return t, data, nil
	}
	return 0, nil, errNoObject
}

func (r *objectReader) readFromPacks(h plumbing.Hash) (plumbing.ObjectType, []byte, bool) {
	for _, p := range r.packs {
		off, ok, err := p.offset(h)
		if err != nil || !ok {
			continue
		}
		t, data, err := r.readPacked(p, off, 0)
		return t, data, err == nil
	}
	return 0, nil, false
}

var zReaders sync.Pool

// inflate reads n bytes of zlib data from src with a pooled reader.
func inflate(src io.Reader, n int64) ([]byte, error) {
	var z io.ReadCloser
	if v := zReaders.Get(); v != nil {
		z = v.(io.ReadCloser)
		if err := z.(zlib.Resetter).Reset(src, nil); err != nil {
			return nil, err
		}
	} else {
		var err error
		if z, err = zlib.NewReader(src); err != nil {
			return nil, err
		}
	}
	defer zReaders.Put(z)
	if n < 0 {
		return io.ReadAll(z)
	}
	data := make([]byte, n)
	_, err := io.ReadFull(z, data)
	return data, err
}

func (r *objectReader) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(r.dir, hex[:2], hex[2:]))
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	raw, err := inflate(bufio.NewReader(f), -1)
	if err != nil {
		return 0, nil, err
	}
	nul := bytes.IndexByte(raw, 0)
	if nul < 0 {
		return 0, nil, errors.New("corrupt loose object")
	}
	typ, size, ok := bytes.Cut(raw[:nul], []byte{' '})
	n, err := strconv.Atoi(string(size))
	if !ok || err != nil || n != len(raw)-nul-1 {
		return 0, nil, errors.New("corrupt loose object header")
	}
	t, err := plumbing.ParseObjectType(string(typ))
	if err != nil {
		return 0, nil, err
	}
	return t, raw[nul+1:], nil
}

const maxDeltaDepth = 10000

// readPacked reads the object at off, resolving deltas.
func (r *objectReader) readPacked(p *packFile, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxDeltaDepth {
		return 0, nil, errors.New("delta chain too long")
	}
	br := bufio.NewReaderSize(io.NewSectionReader(p.pack, off, 1<<62), 4096)
	c, err := br.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = br.ReadByte(); err != nil {
			return 0, nil, err
		}
		size |= int64(c&0x7f) << shift
	}
	var (
		baseType plumbing.ObjectType
		base     []byte
	)
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		c, err := br.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil {
				return 0, nil, err
			}
			rel = ((rel + 1) << 7) | int64(c&0x7f)
		}
		k := baseKey{p, off - rel}
		if b, ok := r.bases[k]; ok {
			baseType, base = b.typ, b.data
		} else {
			if baseType, base, err = r.readPacked(p, off-rel, depth+1); err != nil {
				return 0, nil, err
			}
			if r.bytes+len(base) > baseBytes {
				clear(r.bases)
				r.bytes = 0
			}
			r.bases[k] = baseObj{baseType, base}
			r.bytes += len(base)
		}
	case plumbing.REFDeltaObject:
		var bh plumbing.Hash
		if _, err := io.ReadFull(br, bh[:]); err != nil {
			return 0, nil, err
		}
		if baseType, base, err = r.read(bh); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, fmt.Errorf("pack object type %d", typ)
	}
	data, err := inflate(br, size)
	if err != nil {
		return 0, nil, err
	}
	if base == nil && typ != plumbing.OFSDeltaObject && typ != plumbing.REFDeltaObject {
		return typ, data, nil
	}
	out, err := applyDelta(base, data)
	return baseType, out, err
}

// applyDelta applies a git delta to base.
func applyDelta(base, delta []byte) ([]byte, error) {
	varint := func() (int, error) {
		v, shift := 0, 0
		for {
			if len(delta) == 0 {
				return 0, errors.New("truncated delta")
			}
			c := delta[0]
			delta = delta[1:]
			v |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, nil
			}
		}
	}
	srcSize, err := varint()
	if err != nil {
		return nil, err
	}
	if srcSize != len(base) {
		return nil, errors.New("delta base size mismatch")
	}
	dstSize, err := varint()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		if op&0x80 != 0 {
			var off, n int
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated delta")
					}
					off |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated delta")
					}
					n |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || off < 0 {
				return nil, errors.New("delta copy out of range")
			}
			out = append(out, base[off:off+n]...)
		} else if op != 0 {
			if int(op) > len(delta) {
				return nil, errors.New("truncated delta")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		} else {
			return nil, errors.New("delta opcode 0")
		}
	}
	if len(out) != dstSize {
		return nil, errors.New("delta result size mismatch")
	}
	return out, nil
}

// close releases the open pack files.
func (r *objectReader) close() {
	for _, p := range r.packs {
		p.idx.Close()
		p.pack.Close()
	}
	r.packs = nil
	r.seen = map[string]bool{}
	clear(r.bases)
	r.bytes = 0
}
