package odb

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A batch of every object of a generated repository, flushed as one pack:
// the same DB reads it at once, git reads the same bytes, `git verify-pack`
// and `git fsck --strict` pass, and no loose object was written.
func TestBatchWritesOnePack(t *testing.T) {
	repo := genRepo(t)
	want := catAll(t, repo)
	mine := t.TempDir()
	git(t, mine, nil, "init", "-q", "--bare", ".")
	db := Open(filepath.Join(mine, "objects"))
	defer db.Close()
	if _, _, err := db.Read(plumbingHashOf(want)); err == nil {
		t.Fatal("object found before it was written")
	}
	db.Begin()
	for h, o := range want {
		if err := db.Write(o.typ, o.data, h, false); err != nil {
			t.Fatal(err)
		}
	}
	for h, o := range want { // readable from the batch before the flush
		typ, data, err := db.Read(h)
		if err != nil || typ != o.typ || !bytes.Equal(data, o.data) {
			t.Fatalf("in batch: %s: %v %v", h, typ, err)
		}
	}
	if err := db.Flush(2, false); err != nil {
		t.Fatal(err)
	}
	for h, o := range want { // and from the new pack, by the same DB
		typ, data, err := db.Read(h)
		if err != nil || typ != o.typ || !bytes.Equal(data, o.data) {
			t.Fatalf("after flush: %s: %v %v", h, typ, err)
		}
	}
	idx := packs(t, mine)
	if len(idx) != 1 {
		t.Fatalf("%d packs", len(idx))
	}
	if tmp, _ := filepath.Glob(filepath.Join(mine, "objects", "pack", "tmp_*")); len(tmp) > 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	if loose, _ := filepath.Glob(filepath.Join(mine, "objects", "??", "*")); len(loose) > 0 {
		t.Fatalf("loose objects written: %d", len(loose))
	}
	git(t, mine, nil, "verify-pack", strings.TrimSuffix(idx[0], ".idx")+".pack")
	got := catAll(t, mine)
	for h, o := range want {
		if g := got[h]; g.typ != o.typ || !bytes.Equal(g.data, o.data) {
			t.Fatalf("git reads %s as %v (%d bytes)", h, g.typ, len(g.data))
		}
	}
	git(t, mine, nil, "fsck", "--strict", "--no-dangling")
	compare(t, "packed by odb", mine, want)
	if fi, err := os.Stat(idx[0]); err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("index mode %v %v", fi.Mode(), err)
	}
}

// A batch smaller than the pack minimum is written as loose objects.
func TestSmallBatchStaysLoose(t *testing.T) {
	mine := t.TempDir()
	git(t, mine, nil, "init", "-q", "--bare", ".")
	db := Open(filepath.Join(mine, "objects"))
	defer db.Close()
	db.Begin()
	data := []byte("hello\n")
	h := hashOf(data)
	if err := db.Write(blobType, data, h, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(2, false); err != nil {
		t.Fatal(err)
	}
	if idx, _ := filepath.Glob(filepath.Join(mine, "objects", "pack", "*.idx")); len(idx) != 0 {
		t.Fatalf("packs: %v", idx)
	}
	if out := git(t, mine, nil, "cat-file", "-p", h.String()); string(out) != "hello\n" {
		t.Fatalf("git reads %q", out)
	}
}

var blobType = plumbing.BlobObject

func hashOf(data []byte) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, data) }

func plumbingHashOf(m map[plumbing.Hash]gitObject) plumbing.Hash {
	for h := range m {
		return h
	}
	return plumbing.ZeroHash
}
