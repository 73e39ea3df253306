package odb

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	mine, db := bareDB(t)
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
	mine, db := bareDB(t)
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

// A batch's trees go into its pack as deltas against the newer version of
// the same directory: 200 records, each changing one file of one of three
// directories in turn (one of 2 000 files, each version larger than one
// delta copy carries) and so their parent, or adding one at the end of the
// large one (for ten records), or removing its first (for five). The pack is a small fraction of the
// trees' size, no chain is longer than git's, and git and a fresh DB read
// every object as written.
func TestBatchPacksTreesAsDeltas(t *testing.T) {
	mine, db := bareDB(t)
	want := map[plumbing.Hash]gitObject{}
	put := func(typ plumbing.ObjectType, data []byte) plumbing.Hash {
		h := plumbing.ComputeHash(typ, data)
		if err := db.Write(typ, data, h, false); err != nil {
			t.Fatal(err)
		}
		want[h] = gitObject{typ, data}
		return h
	}
	db.Begin()
	dir := func(prefix string, n int) []Entry {
		e := make([]Entry, n)
		for i := range e {
			name := fmt.Sprintf("%s-%04d.json", prefix, i)
			e[i] = Entry{Name: name, Mode: 0o100644, Hash: put(blobType, []byte(name+"\n"))}
		}
		return e
	}
	dirs := [][]Entry{dir("ws", 2000), dir("a", 30), dir("b", 30)}
	names := []string{"state", "a", "b"}
	readme := put(blobType, []byte("readme\n"))
	treeBytes, trees := 0, map[plumbing.Hash]bool{}
	var parent plumbing.Hash
	for v := 0; v < 200; v++ {
		d := v % 3 // the three directories change in turn
		switch i := v * 37 % len(dirs[d]); {
		case d == 0 && v >= 60 && v < 90: // a file added at the end: the last name changes
			dirs[0] = append(dirs[0], Entry{Name: fmt.Sprintf("zz-%d.json", v), Mode: 0o100644, Hash: readme})
		case d == 0 && v >= 120 && v < 135: // the first file removed: the first name changes
			dirs[0] = dirs[0][1:]
		default:
			dirs[d][i].Hash = put(blobType, fmt.Appendf(nil, "%s version %d\n", dirs[d][i].Name, v))
		}
		rootEntries := []Entry{{Name: "README", Mode: 0o100644, Hash: readme}}
		for k, e := range dirs {
			data := EncodeTree(e)
			h := put(plumbing.TreeObject, data)
			if !trees[h] {
				trees[h] = true
				treeBytes += len(data)
			}
			rootEntries = append(rootEntries, Entry{Name: names[k], Mode: 0o040000, Hash: h})
		}
		root := EncodeTree(rootEntries)
		treeBytes += len(root)
		msg := fmt.Sprintf("tree %s\n", put(plumbing.TreeObject, root))
		if !parent.IsZero() {
			msg += fmt.Sprintf("parent %s\n", parent)
		}
		msg += fmt.Sprintf("author a <a@example.com> %d +0130\ncommitter a <a@example.com> %d +0130\n\nv%d\n", 1700000000+v, 1700000000+v, v)
		parent = put(plumbing.CommitObject, []byte(msg))
	}
	if err := db.Flush(2, false); err != nil {
		t.Fatal(err)
	}
	idx := packs(t, mine)
	if len(idx) != 1 {
		t.Fatalf("%d packs", len(idx))
	}
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	if fi, err := os.Stat(pack); err != nil || fi.Size() > int64(treeBytes)/10 {
		t.Fatalf("pack of %v bytes for %d bytes of trees (%v)", fi.Size(), treeBytes, err)
	}
	if n := deltas(t, mine); n != 402-10 { // every tree but the newest of each chain of 1 + maxPackDepth
		t.Fatalf("%d deltas", n)
	}
	longest := 0
	for _, l := range strings.Split(string(git(t, mine, nil, "verify-pack", "-v", pack)), "\n") {
		var n, objs int
		if _, err := fmt.Sscanf(l, "chain length = %d: %d", &n, &objs); err == nil {
			longest = max(longest, n)
		}
	}
	if longest == 0 || longest > maxPackDepth {
		t.Fatalf("longest delta chain %d", longest)
	}
	git(t, mine, nil, "update-ref", "refs/heads/main", parent.String())
	git(t, mine, nil, "fsck", "--strict", "--no-dangling")
	got := catAll(t, mine)
	if len(got) != len(want) {
		t.Fatalf("git reads %d objects, %d written", len(got), len(want))
	}
	for h, o := range want {
		if g := got[h]; g.typ != o.typ || !bytes.Equal(g.data, o.data) {
			t.Fatalf("git reads %s as %v (%d bytes)", h, g.typ, len(g.data))
		}
	}
	compare(t, "trees as deltas", mine, want)
}

// A batch keeps an older version of a directory's tree as a delta against
// the newer one as soon as the newer one comes in: one whole tree per chain
// of 1 + maxPackDepth stays in memory. Every version still reads back whole
// during the batch, and a batch too small for a pack writes each object
// loose, whole.
func TestBatchKeepsOlderTreesAsDeltas(t *testing.T) {
	mine, db := bareDB(t)
	db.Begin()
	want := map[plumbing.Hash]gitObject{}
	entries := make([]Entry, 500)
	for i := range entries {
		entries[i] = Entry{Name: fmt.Sprintf("f-%03d.json", i), Mode: 0o100644, Hash: plumbing.ComputeHash(blobType, []byte{byte(i)})}
	}
	var versions []plumbing.Hash
	for v := range 120 {
		entries[v*7%len(entries)].Hash = plumbing.ComputeHash(blobType, fmt.Appendf(nil, "v%d", v))
		data := EncodeTree(entries)
		h := plumbing.ComputeHash(plumbing.TreeObject, data)
		if err := db.Write(plumbing.TreeObject, data, h, false); err != nil {
			t.Fatal(err)
		}
		want[h] = gitObject{plumbing.TreeObject, data}
		versions = append(versions, h)
	}
	whole, longest := 0, 0
	for i, o := range db.batch.objs {
		if o.data != nil {
			whole++
		}
		n := 0
		for j := i; db.batch.objs[j].data == nil; j = db.batch.objs[j].base {
			n++
		}
		longest = max(longest, n)
	}
	if whole != 3 || longest != maxPackDepth { // 120 versions: chains of 51, 51 and 18
		t.Fatalf("%d whole trees, longest chain %d", whole, longest)
	}
	for _, h := range versions {
		typ, data, err := db.Read(h)
		if err != nil || typ != plumbing.TreeObject || !bytes.Equal(data, want[h].data) {
			t.Fatalf("read %s in the batch: %v, %d bytes, %v", h, typ, len(data), err)
		}
		if _, size, err := db.Stat(h); err != nil || size != int64(len(want[h].data)) {
			t.Fatalf("stat %s in the batch: %d, %v", h, size, err)
		}
	}
	if err := db.Flush(1000, false); err != nil { // 120 objects: loose
		t.Fatal(err)
	}
	if idx, _ := filepath.Glob(filepath.Join(mine, "objects", "pack", "*.idx")); len(idx) != 0 {
		t.Fatalf("%d packs for a batch under packMin", len(idx))
	}
	got := catAll(t, mine)
	fresh := Open(filepath.Join(mine, "objects"))
	defer fresh.Close()
	for h, o := range want {
		typ, data, err := fresh.Read(h)
		if g := got[h]; g.typ != o.typ || !bytes.Equal(g.data, o.data) || err != nil || typ != o.typ || !bytes.Equal(data, o.data) {
			t.Fatalf("%s written loose: git reads %v (%d bytes), odb %v (%d bytes, %v)", h, g.typ, len(g.data), typ, len(data), err)
		}
	}
}

// Random versions of directories that share end names (so deltify weighs
// trees of other directories too), edited at random places, sometimes
// back to an earlier version (an object the batch already holds): every
// version reads back whole during the batch, at random moments, and after
// Flush from the pack, for this DB, a fresh one and git (fsck --strict).
func TestBatchRandomTrees(t *testing.T) {
	mine, db := bareDB(t)
	rng := rand.New(rand.NewPCG(11, 2026))
	db.Begin()
	want := map[plumbing.Hash][]byte{}
	var written []plumbing.Hash
	put := func(entries []Entry) {
		data := EncodeTree(entries)
		h := plumbing.ComputeHash(plumbing.TreeObject, data)
		if err := db.Write(plumbing.TreeObject, data, h, false); err != nil {
			t.Fatal(err)
		}
		want[h] = data
		written = append(written, h)
	}
	blob := func(i int) plumbing.Hash { return hashOf(fmt.Appendf(nil, "%d", i)) }
	type dir struct{ entries, earlier []Entry }
	dirs := make([]*dir, 6)
	for d := range dirs {
		n := 1 + rng.IntN(300)
		e := []Entry{{Name: "!first", Mode: 0o100644, Hash: blob(d)}} // the same first name in every directory
		for i := range n {
			e = append(e, Entry{Name: fmt.Sprintf("d%d-%04d", d, i*2), Mode: 0o100644, Hash: blob(i)})
		}
		dirs[d] = &dir{entries: e}
	}
	for step := range 1500 {
		d := dirs[rng.IntN(len(dirs))]
		e := slices.Clone(d.entries)
		switch k := rng.IntN(10); {
		case k < 6: // a file changed
			e[rng.IntN(len(e))].Hash = blob(step + 1000)
		case k < 7 && len(e) > 2: // a file removed
			i := 1 + rng.IntN(len(e)-1)
			e = slices.Delete(e, i, i+1)
		case k < 8: // a file added (odd numbers fall between the others)
			name := fmt.Sprintf("%s-%04d", e[len(e)-1].Name[:2], 2*rng.IntN(400)+1)
			if i, found := slices.BinarySearchFunc(e[1:], name, func(x Entry, n string) int { return strings.Compare(x.Name, n) }); !found {
				e = slices.Insert(e, i+1, Entry{Name: name, Mode: 0o100644, Hash: blob(step)})
			}
		case k < 9 && d.earlier != nil: // back to an earlier version
			e = d.earlier
		default: // a file added at the end: the last name changes
			e = append(e, Entry{Name: fmt.Sprintf("~last-%d", step), Mode: 0o100644, Hash: blob(step)})
		}
		if rng.IntN(5) == 0 {
			d.earlier = d.entries
		}
		d.entries = e
		put(e)
		if step%50 == 0 {
			for range 20 {
				h := written[rng.IntN(len(written))]
				if typ, data, err := db.Read(h); err != nil || typ != plumbing.TreeObject || !bytes.Equal(data, want[h]) {
					t.Fatalf("step %d: read %s in the batch: %v, %d bytes, %v", step, h, typ, len(data), err)
				}
			}
		}
	}
	for i := range db.batch.objs {
		n := 0
		for j := i; db.batch.objs[j].data == nil; j = db.batch.objs[j].base {
			n++
		}
		if n > maxPackDepth {
			t.Fatalf("object %d at the end of a chain of %d deltas", i, n)
		}
	}
	if err := db.Flush(2, false); err != nil {
		t.Fatal(err)
	}
	if n := deltas(t, mine); n < len(want)/2 {
		t.Fatalf("%d deltas of %d trees", n, len(want))
	}
	git(t, mine, nil, "fsck", "--strict", "--no-dangling")
	got := catAll(t, mine)
	fresh := Open(filepath.Join(mine, "objects"))
	defer fresh.Close()
	for h, data := range want {
		if g := got[h]; g.typ != plumbing.TreeObject || !bytes.Equal(g.data, data) {
			t.Fatalf("git reads %s as %v (%d bytes)", h, g.typ, len(g.data))
		}
		for _, r := range []*DB{db, fresh} {
			if typ, d, err := r.Read(h); err != nil || typ != plumbing.TreeObject || !bytes.Equal(d, data) {
				t.Fatalf("read %s from the pack: %v, %d bytes, %v", h, typ, len(d), err)
			}
		}
	}
}

// bareDB makes an empty bare repository and opens its objects directory;
// the DB is closed when the test ends.
func bareDB(t *testing.T) (string, *DB) {
	t.Helper()
	mine := t.TempDir()
	git(t, mine, nil, "init", "-q", "--bare", ".")
	db := Open(filepath.Join(mine, "objects"))
	t.Cleanup(db.Close)
	return mine, db
}
