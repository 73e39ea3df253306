package odb

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// The fuzz targets below run the parsers on hostile input: none may panic,
// and none may allocate more than the input can justify (sizes in headers
// are checked against the bytes that hold them). Seeds are generated here:
// real encodings of every kind of object, deltas and packs.

func FuzzApplyDelta(f *testing.F) {
	base := bytes.Repeat([]byte("0123456789abcdef"), 300)
	for _, target := range [][]byte{base[:10], append(append([]byte{}, base...), "tail"...), []byte("other"), nil} {
		f.Add(base, makeDelta(base, target))
	}
	f.Add([]byte("abc"), []byte{3, 3, 0x90, 3}) // copy with no offset byte
	f.Add([]byte{}, []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := ApplyDelta(base, delta)
		if err != nil {
			return
		}
		_, dst, _, _ := deltaSizes(delta)
		if int64(len(out)) != dst {
			t.Fatalf("result of %d bytes, delta announced %d", len(out), dst)
		}
	})
}

func FuzzDecodeTree(f *testing.F) {
	h := plumbing.ComputeHash(plumbing.BlobObject, []byte("x"))
	f.Add(EncodeTree([]Entry{
		{Name: "a.json", Mode: 0o100644, Hash: h},
		{Name: "run", Mode: 0o100755, Hash: h},
		{Name: "d", Mode: 0o040000, Hash: EmptyTree},
		{Name: "link", Mode: 0o120000, Hash: h},
		{Name: "sub", Mode: 0o160000, Hash: h},
	}))
	f.Add([]byte("040000 d\x00" + string(h[:])))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		entries, err := DecodeTree(raw)
		if err != nil {
			return
		}
		// FindRaw finds what decoding finds: the first entry of each name.
		for _, e := range entries {
			got, ok, err := FindRaw(raw, e.Name)
			if i, _ := Find(entries, e.Name); err != nil || !ok || got != entries[i] {
				t.Fatalf("FindRaw(%q) = %+v, %v, %v; decoded %+v", e.Name, got, ok, err, entries[i])
			}
		}
		if _, ok, err := FindRaw(raw, "\x00not a name"); ok || err != nil {
			t.Fatalf("FindRaw of a name no entry has: %v, %v", ok, err)
		}
		// Encoding is canonical: encoding what the encoding decodes to
		// gives the same bytes.
		enc := EncodeTree(entries)
		again, err := DecodeTree(enc)
		if err != nil || len(again) != len(entries) {
			t.Fatalf("re-decode: %v, %d entries of %d", err, len(again), len(entries))
		}
		if enc2 := EncodeTree(again); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%q\n%q", enc, enc2)
		}
	})
}

func FuzzParseCommit(f *testing.F) {
	tree := EmptyTree.String()
	f.Add([]byte("tree " + tree + "\nparent " + tree + "\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1700000000 -0130\n\nmsg\n\nStrata-Path: x\n"))
	f.Add([]byte("tree " + tree + "\ncommitter <> \n\n"))
	f.Add([]byte("tree " + tree + "\ngpgsig -----BEGIN\n \n -----END\n\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseCommit(raw)
		if err == nil && c.Tree.IsZero() {
			t.Fatal("a commit without a tree was accepted")
		}
	})
}

// FuzzPackIndex reads a pack through its index: every name the index lists
// is looked up, read and stat'ed; where both succeed they must agree.
func FuzzPackIndex(f *testing.F) {
	for _, largeFrom := range []int64{1 << 40, 0, 200} {
		idx, pack, _ := samplePack(largeFrom)
		f.Add(idx, pack)
	}
	v2, data, _ := samplePack(1 << 40)
	f.Add(indexV1(v2), data)
	f.Fuzz(func(t *testing.T, idx, data []byte) {
		p, err := newPack(bytes.NewReader(idx), int64(len(idx)), bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		// the same pack read in place, as a mapped one is
		inMem, err := newPack(bytes.NewReader(idx), int64(len(idx)), mem(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		db, dbMem := Open(t.TempDir()), Open(t.TempDir())
		db.packs, dbMem.packs = []*pack{p}, []*pack{inMem}
		names, err := p.bucket(0, p.n)
		if err != nil {
			return
		}
		for i := uint32(0); i < p.n; i++ {
			var h plumbing.Hash
			copy(h[:], names[int(i)*hashLen:])
			typ, data, rerr := db.Read(h)
			st, size, serr := db.Stat(h)
			if rerr == nil && serr == nil && (typ != st || int64(len(data)) != size) {
				t.Fatalf("%s: read %v of %d bytes, stat %v of %d", h, typ, len(data), st, size)
			}
			if rerr == nil {
				if _, _, err := db.ReadLimit(h, int64(len(data))-1); !isTooLarge(err) && len(data) > 0 {
					t.Fatalf("%s: a limit under its size: %v", h, err)
				}
			}
			mt, mdata, mrerr := dbMem.Read(h)
			mst, msize, mserr := dbMem.Stat(h)
			if (rerr == nil) != (mrerr == nil) || mt != typ || !bytes.Equal(mdata, data) ||
				(serr == nil) != (mserr == nil) || mst != st || msize != size {
				t.Fatalf("%s: read from a file %v %d %v, stat %v %d %v; in place %v %d %v, stat %v %d %v",
					h, typ, len(data), rerr, st, size, serr, mt, len(mdata), mrerr, mst, msize, mserr)
			}
		}
	})
}
