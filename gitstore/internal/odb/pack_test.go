package odb

import (
	"bytes"
	"compress/zlib"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitperm"
)

// TestCraftedPack reads every object of a crafted pack, once with 4-byte
// offsets and once with every offset in the index's large-offset table.
func TestCraftedPack(t *testing.T) {
	for _, largeFrom := range []int64{1 << 40, 0, 200} {
		idx, pack, objs := samplePack(largeFrom)
		db := Open(writePackDir(t, idx, pack))
		db.rescan()
		if len(db.packs) != 1 || (db.packs[0].nlarge == 0) != (largeFrom == 1<<40) {
			t.Fatalf("large from %d: %d packs, large-offset table not as crafted", largeFrom, len(db.packs))
		}
		for i, o := range objs {
			h := plumbing.ComputeHash(o.typ, o.data)
			typ, data, err := db.Read(h)
			if err != nil || typ != o.typ || !bytes.Equal(data, o.data) {
				t.Fatalf("large from %d: object %d: %v %v %q", largeFrom, i, typ, err, data)
			}
			st, size, err := db.Stat(h)
			if err != nil || st != o.typ || size != int64(len(o.data)) {
				t.Fatalf("large from %d: stat %d: %v %d %v", largeFrom, i, st, size, err)
			}
		}
		db.Close()
	}
}

// TestReadLimit refuses objects over the limit, loose and packed, whole and
// delta, with an error naming the size.
func TestReadLimit(t *testing.T) {
	idx, pack, objs := samplePack(1 << 40)
	db := Open(writePackDir(t, idx, pack))
	defer db.Close()
	big := bytes.Repeat([]byte("x"), 5000)
	lh := plumbing.ComputeHash(plumbing.BlobObject, big)
	if err := db.Write(plumbing.BlobObject, big, lh, false); err != nil {
		t.Fatal(err)
	}
	objs = append(objs, testObj{typ: plumbing.BlobObject, data: big})
	for i, o := range objs {
		h := plumbing.ComputeHash(o.typ, o.data)
		n := int64(len(o.data))
		_, _, err := db.ReadLimit(h, n-1)
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Size != n || tl.Hash != h {
			t.Fatalf("object %d (%d bytes) under limit %d: %v", i, n, n-1, err)
		}
		if _, data, err := db.ReadLimit(h, n); err != nil || !bytes.Equal(data, o.data) {
			t.Fatalf("object %d at its own size: %v", i, err)
		}
	}
}

// TestHostileHeaders gives sizes no data can hold: each is refused before
// any allocation of that size.
func TestHostileHeaders(t *testing.T) {
	idx, pack, _ := samplePack(1 << 40)
	db := Open(writePackDir(t, idx, pack))
	defer db.Close()
	// The first entry claims 2^55 bytes.
	bad := append([]byte{}, pack[:12]...)
	bad = append(bad, packEntryHeader(nil, plumbing.BlobObject, 1<<55)...)
	bad = append(bad, pack[12+len(packEntryHeader(nil, plumbing.BlobObject, 1170)):]...)
	p, err := newPack(bytes.NewReader(idx), int64(len(idx)), bytes.NewReader(bad), int64(len(bad)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.entryAt(12); err == nil {
		t.Fatal("an entry of 2^55 bytes in a small pack was accepted")
	}
	// An index whose object count is larger than the file.
	huge := append([]byte{}, idx...)
	for i := 8 + 4*200; i < 8+4*256; i += 4 {
		copy(huge[i:], []byte{0xff, 0xff, 0xff, 0xff})
	}
	if _, err := newPack(bytes.NewReader(huge), int64(len(huge)), bytes.NewReader(pack), int64(len(pack))); err == nil {
		t.Fatal("an index claiming 2^32 objects was accepted")
	}
	// The same as a version-1 index, and one whose offsets have the top
	// bit set (version 1 has no large-offset table).
	v1 := indexV1(idx)
	hugeV1 := append([]byte{}, v1...)
	for i := 4 * 200; i < 4*256; i += 4 {
		copy(hugeV1[i:], []byte{0xff, 0xff, 0xff, 0xff})
	}
	if _, err := newPack(bytes.NewReader(hugeV1), int64(len(hugeV1)), bytes.NewReader(pack), int64(len(pack))); err == nil {
		t.Fatal("a version-1 index claiming 2^32 objects was accepted")
	}
	top := append([]byte{}, v1...)
	for i := 0; i < 6; i++ {
		top[4*256+i*(4+hashLen)] |= 0x80
	}
	p1, err := newPack(bytes.NewReader(top), int64(len(top)), bytes.NewReader(pack), int64(len(pack)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if _, err := p1.offsetAt(int64(i)); err == nil {
			t.Fatalf("entry %d: a version-1 offset with its top bit set was accepted", i)
		}
	}
	if _, err := ApplyDelta(nil, []byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}); err == nil {
		t.Fatal("a delta announcing 2^63 bytes was accepted")
	}
	// A loose object of 40 bytes on disk claiming 10^17.
	var buf bytes.Buffer
	z := zlib.NewWriter(&buf)
	z.Write([]byte("blob 99999999999999999\x00abc"))
	z.Close()
	h := plumbing.NewHash(strings.Repeat("12", 20))
	dir := db.Dir()
	if err := CreateFile(filepath.Join(dir, "12", strings.Repeat("12", 19)), buf.Bytes(), 0o444, gitperm.Umask, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Read(h); err == nil {
		t.Fatal("a loose object claiming 10^17 bytes was read")
	}
	if _, _, err := db.Stat(h); err == nil {
		t.Fatal("a loose object claiming 10^17 bytes was given a size")
	}
}

// Prefix finds every packed object by the first hex digits of its name,
// and nothing for a prefix no object has.
func TestPrefixPacked(t *testing.T) {
	idx, pack, objs := samplePack(1 << 40)
	db := Open(writePackDir(t, idx, pack))
	defer db.Close()
	for _, o := range objs {
		h := plumbing.ComputeHash(o.typ, o.data)
		got, err := db.Prefix(h.String()[:6])
		if err != nil || len(got) != 1 || got[0] != h {
			t.Fatalf("Prefix(%s) = %v, %v", h.String()[:6], got, err)
		}
	}
	if got, err := db.Prefix("0000000000"); err != nil || len(got) != 0 {
		t.Fatalf("Prefix of no object = %v, %v", got, err)
	}
}

// TestDeltaBufsBounded: the buffers kept for reading deltas stop at
// deltaBufDepths depths and deltaBufMax bytes, whatever chain a pack holds.
func TestDeltaBufsBounded(t *testing.T) {
	db := Open(t.TempDir())
	defer db.Close()
	for depth := 0; depth < maxDeltaDepth; depth += 97 {
		db.keepDeltaBuf(depth, make([]byte, 100))
	}
	db.keepDeltaBuf(1, make([]byte, deltaBufMax+1))
	if len(db.deltaBufs) > deltaBufDepths {
		t.Fatalf("%d depths kept, over %d", len(db.deltaBufs), deltaBufDepths)
	}
	if b := db.deltaBuf(1); cap(b) > deltaBufMax {
		t.Fatalf("a %d-byte buffer kept, over %d", cap(b), deltaBufMax)
	}
	if b := db.deltaBuf(97); cap(b) != 100 {
		t.Fatalf("depth 97 keeps a %d-byte buffer, want the 100-byte one", cap(b))
	}
}
