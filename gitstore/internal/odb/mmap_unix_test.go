//go:build unix

package odb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestMappedPackCutShort reads a mapped pack whose file another program
// truncates: the read fails with an error, the process goes on.
func TestMappedPackCutShort(t *testing.T) {
	db, dir, objs := openedSample(t)
	if _, ok := db.packs[0].data.(mem); !ok {
		t.Fatalf("the pack is read through %T, not mapped", db.packs[0].data)
	}
	clear(db.bases)
	if err := os.Truncate(filepath.Join(dir, "pack", "pack-test.pack"), 0); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		h := plumbing.ComputeHash(o.typ, o.data)
		_, _, err := db.Read(h)
		if err == nil {
			t.Fatalf("%s read from a pack cut to 0 bytes", h)
		}
		if !strings.Contains(err.Error(), "unreadable") {
			t.Errorf("%s: %v, not the fault's error", h, err)
		}
		if _, _, err := db.Stat(h); err == nil {
			t.Fatalf("%s stat'ed from a pack cut to 0 bytes", h)
		}
	}
}

// TestMappedIndexCutShort looks objects up in a pack whose mapped index
// another program truncates: look-ups, stats and prefix searches fail with
// an error, the process goes on.
func TestMappedIndexCutShort(t *testing.T) {
	db, dir, objs := openedSample(t)
	if _, ok := db.packs[0].idx.(mem); !ok {
		t.Fatalf("the index is read through %T, not mapped", db.packs[0].idx)
	}
	if err := os.Truncate(filepath.Join(dir, "pack", "pack-test.idx"), 0); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		h := plumbing.ComputeHash(o.typ, o.data)
		if _, _, err := db.Read(h); err == nil {
			t.Fatalf("%s read through an index cut to 0 bytes", h)
		}
		if _, _, err := db.Stat(h); err == nil {
			t.Fatalf("%s stat'ed through an index cut to 0 bytes", h)
		}
		if got, err := db.Prefix(h.String()[:8]); err != nil || len(got) != 0 {
			t.Fatalf("prefix of %s through an index cut to 0 bytes: %v %v", h, got, err)
		}
	}
}

// openedSample writes samplePack into a directory and opens it with a DB
// that has read one object (so the pack is open), closed at the test's end.
func openedSample(t *testing.T) (*DB, string, []testObj) {
	t.Helper()
	idx, pack, objs := samplePack(1 << 40)
	dir := writePackDir(t, idx, pack)
	db := Open(dir)
	t.Cleanup(db.Close)
	if _, _, err := db.Read(plumbing.ComputeHash(objs[0].typ, objs[0].data)); err != nil {
		t.Fatal(err)
	}
	if len(db.packs) != 1 {
		t.Fatalf("%d packs open", len(db.packs))
	}
	return db, dir, objs
}
