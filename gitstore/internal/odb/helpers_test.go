package odb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// testObj is one object for buildPack: whole, or (delta != nil) an offset
// delta against the object at index base of the same list.
type testObj struct {
	typ   plumbing.ObjectType
	data  []byte // the object's content (for a delta: its result)
	base  int
	delta []byte
}

// buildPack writes a version-2 pack of objs and its version-2 index, the
// way git does, except that every object at an offset of largeFrom or more
// is given an entry in the index's large-offset table (git writes one only
// above 2 GiB, or above the offset given to --index-version=2,<offset>).
func buildPack(objs []testObj, largeFrom int64) (idx, pack []byte) {
	var p bytes.Buffer
	p.WriteString("PACK")
	binary.Write(&p, binary.BigEndian, uint32(2))
	binary.Write(&p, binary.BigEndian, uint32(len(objs)))
	type rec struct {
		h   plumbing.Hash
		off int64
		crc uint32
	}
	recs := make([]rec, len(objs))
	for i, o := range objs {
		off := int64(p.Len())
		typ, body := o.typ, o.data
		if o.delta != nil {
			typ, body = plumbing.OFSDeltaObject, o.delta
		}
		p.Write(packEntryHeader(nil, typ, int64(len(body))))
		if o.delta != nil {
			p.Write(appendOfsDelta(nil, uint64(off-recs[o.base].off)))
		}
		z := zlib.NewWriter(&p)
		z.Write(body)
		z.Close()
		recs[i] = rec{h: plumbing.ComputeHash(o.typ, o.data), off: off, crc: 0}
	}
	sum := sha1.Sum(p.Bytes())
	p.Write(sum[:])

	sort.Slice(recs, func(i, j int) bool { return bytes.Compare(recs[i].h[:], recs[j].h[:]) < 0 })
	var x bytes.Buffer
	x.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for b := 0; b < 256; b++ {
		n := sort.Search(len(recs), func(i int) bool { return int(recs[i].h[0]) > b })
		binary.Write(&x, binary.BigEndian, uint32(n))
	}
	for _, r := range recs {
		x.Write(r.h[:])
	}
	for _, r := range recs {
		binary.Write(&x, binary.BigEndian, r.crc)
	}
	var large []int64
	for _, r := range recs {
		if r.off >= largeFrom {
			binary.Write(&x, binary.BigEndian, uint32(0x80000000|len(large)))
			large = append(large, r.off)
		} else {
			binary.Write(&x, binary.BigEndian, uint32(r.off))
		}
	}
	for _, off := range large {
		binary.Write(&x, binary.BigEndian, uint64(off))
	}
	x.Write(sum[:])
	isum := sha1.Sum(x.Bytes())
	x.Write(isum[:])
	return x.Bytes(), p.Bytes()
}

// indexV1 rewrites a version-2 index without large offsets as git's
// version 1: the fan-out table, then each object's offset and name, then
// the two checksums.
func indexV1(v2 []byte) []byte {
	n := int(binary.BigEndian.Uint32(v2[idxHeader-4:]))
	names := v2[idxHeader:]
	offs := v2[idxHeader+n*(hashLen+4):]
	var x bytes.Buffer
	x.Write(v2[8:idxHeader])
	for i := 0; i < n; i++ {
		x.Write(offs[i*4 : i*4+4])
		x.Write(names[i*hashLen : (i+1)*hashLen])
	}
	x.Write(v2[len(v2)-2*hashLen:])
	return x.Bytes()
}

// makeDelta returns a delta from base to target: one copy of their common
// prefix, then the rest inserted.
func makeDelta(base, target []byte) []byte {
	d := appendDeltaVarint(nil, uint64(len(base)))
	d = appendDeltaVarint(d, uint64(len(target)))
	n := 0
	for n < len(base) && n < len(target) && n < 0xffff && base[n] == target[n] {
		n++
	}
	if n > 0 {
		d = append(d, 0x80|0x10|0x20, byte(n), byte(n>>8)) // offset 0, two size bytes
	}
	for rest := target[n:]; len(rest) > 0; {
		k := min(len(rest), 127)
		d = append(d, byte(k))
		d = append(d, rest[:k]...)
		rest = rest[k:]
	}
	return d
}

// samplePack is a pack with every kind of entry: the four object types, an
// offset delta and a delta of a delta.
func samplePack(largeFrom int64) (idx, pack []byte, objs []testObj) {
	base := bytes.Repeat([]byte("a line of state that repeats\n"), 40)
	v2 := append(append([]byte{}, base...), "one more\n"...)
	v3 := append(append([]byte{}, v2...), "and another\n"...)
	tree := EncodeTree([]Entry{{Name: "f.json", Mode: 0o100644, Hash: plumbing.ComputeHash(plumbing.BlobObject, base)}})
	th := plumbing.ComputeHash(plumbing.TreeObject, tree)
	commit := []byte("tree " + th.String() + "\ncommitter A <a@b> 1700000000 +0100\n\nmsg\n")
	objs = []testObj{
		{typ: plumbing.BlobObject, data: base},
		{typ: plumbing.TreeObject, data: tree},
		{typ: plumbing.CommitObject, data: commit},
		{typ: plumbing.TagObject, data: []byte("object " + th.String() + "\ntype tree\ntag t\n\n")},
		{typ: plumbing.BlobObject, data: v2, base: 0, delta: makeDelta(base, v2)},
		{typ: plumbing.BlobObject, data: v3, base: 4, delta: makeDelta(v2, v3)},
	}
	idx, pack = buildPack(objs, largeFrom)
	return idx, pack, objs
}

// writePackDir writes idx and pack as the only pack of a new objects
// directory and returns the directory.
func writePackDir(t testing.TB, idx, pack []byte) string {
	gitDir := t.TempDir()
	dir := filepath.Join(gitDir, "objects")
	if err := os.MkdirAll(filepath.Join(dir, "pack"), 0o755); err != nil {
		t.Fatal(err)
	}
	// a git directory: gitperm creates the loose objects' folders only
	// inside one (a folder holding HEAD)
	if err := os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack", "pack-test.idx"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack", "pack-test.pack"), pack, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
