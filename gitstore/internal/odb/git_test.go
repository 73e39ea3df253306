package odb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Differential tests: every object of a generated repository, read through
// odb, must have git's own type, size and bytes (`git cat-file --batch`),
// packed (offset deltas, ref deltas, long chains, the large-offset table)
// and loose (written by git, and written by odb and read back by git).

func git(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := gitCmd(dir, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// gitCmd is git args in dir, with no user or system configuration.
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null")
	return cmd
}

// genRepo makes a bare repository whose history has many similar versions
// of a few files (long delta chains), a binary file larger than one delta
// copy (64 KiB), an empty file, an executable, a symbolic link, nested
// directories and an annotated tag, all written by git fast-import.
func genRepo(t testing.TB) string {
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "--bare", ".")
	var s bytes.Buffer
	inline := func(mode, path string, data []byte) {
		fmt.Fprintf(&s, "M %s inline %s\ndata %d\n", mode, path, len(data))
		s.Write(data)
		s.WriteByte('\n')
	}
	bin := make([]byte, 200<<10)
	x := uint32(7)
	for i := range bin {
		x = x*1664525 + 1013904223
		bin[i] = byte(x >> 24)
	}
	var state bytes.Buffer
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&state, `{"step":%d,"note":"a line of state that grows a little each time"}`+"\n", i)
		fmt.Fprintf(&s, "commit refs/heads/main\ncommitter A U Thor <a@example.com> %d +0130\ndata <<END\nstep %d\n\nStrata-Path: d/state.json\nEND\n", 1700000000+i*60, i)
		inline("100644", "d/state.json", state.Bytes())
		if i%10 == 0 {
			bin[(i*7919)%len(bin)] ^= 0xff
			inline("100644", "blobs/big.bin", bin)
			inline("100755", "tools/run.sh", []byte(fmt.Sprintf("#!/bin/sh\necho %d\n", i)))
			inline("120000", "link", []byte("d/state.json"))
			inline("100644", "empty", nil)
			inline("100644", fmt.Sprintf("deep/a/b/c/%d.json", i), []byte(strconv.Itoa(i)))
		}
	}
	s.WriteString("tag v1\nfrom refs/heads/main\ntagger A U Thor <a@example.com> 1700009999 +0000\ndata 4\nv1!\n")
	git(t, dir, s.Bytes(), "fast-import", "--quiet")
	return dir
}

type gitObject struct {
	typ  plumbing.ObjectType
	data []byte
}

// catAll returns every object of repo as git reads it.
func catAll(t testing.TB, repo string) map[plumbing.Hash]gitObject {
	names := git(t, repo, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	out := git(t, repo, names, "cat-file", "--batch")
	objs := map[plumbing.Hash]gitObject{}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("cat-file --batch: %q", line)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		objs[plumbing.NewHash(f[0])] = gitObject{typ, data[:n]}
	}
	if len(objs) == 0 {
		t.Fatal("no objects")
	}
	return objs
}

// compare reads every object of want through a new DB on repo.
func compare(t *testing.T, what, repo string, want map[plumbing.Hash]gitObject) {
	t.Helper()
	db := Open(filepath.Join(repo, "objects"))
	defer db.Close()
	compareDB(t, what, db, want)
}

// compareDB reads every object of want through db.
func compareDB(t *testing.T, what string, db *DB, want map[plumbing.Hash]gitObject) {
	t.Helper()
	trees, commits := 0, 0
	for h, o := range want {
		typ, data, err := db.Read(h)
		if err != nil || typ != o.typ || !bytes.Equal(data, o.data) {
			t.Fatalf("%s: %s: odb reads %v (%d bytes, %v), git %v (%d bytes)", what, h, typ, len(data), err, o.typ, len(o.data))
		}
		st, size, err := db.Stat(h)
		if err != nil || st != o.typ || size != int64(len(o.data)) {
			t.Fatalf("%s: %s: odb stats %v of %d bytes (%v), git %v of %d", what, h, st, size, err, o.typ, len(o.data))
		}
		switch o.typ {
		case plumbing.TreeObject:
			entries, err := DecodeTree(o.data)
			if err != nil || !bytes.Equal(EncodeTree(entries), o.data) {
				t.Fatalf("%s: tree %s does not round-trip: %v", what, h, err)
			}
			trees++
		case plumbing.CommitObject:
			c, err := ParseCommit(o.data)
			if err != nil || want[c.Tree].typ != plumbing.TreeObject || c.Time < 1700000000 || c.TZ != "+0130" {
				t.Fatalf("%s: commit %s: %+v %v", what, h, c, err)
			}
			commits++
		}
	}
	if trees == 0 || commits == 0 {
		t.Fatalf("%s: %d trees, %d commits", what, trees, commits)
	}
}

func packs(t testing.TB, repo string) []string {
	idx, _ := filepath.Glob(filepath.Join(repo, "objects", "pack", "pack-*.idx"))
	if len(idx) == 0 {
		t.Fatal("no pack")
	}
	return idx
}

// deltas counts the objects git stores as deltas.
func deltas(t testing.TB, repo string) int {
	n := 0
	out := git(t, repo, nil, "cat-file", "--batch-all-objects", "--batch-check=%(deltabase)")
	for _, l := range strings.Fields(string(out)) {
		if l != strings.Repeat("0", 40) {
			n++
		}
	}
	return n
}

func TestMatchesGitPacked(t *testing.T) {
	repo := genRepo(t)
	want := catAll(t, repo)
	compare(t, "fast-import pack", repo, want)
	for _, step := range []struct {
		name string
		args []string
	}{
		{"offset deltas, chains up to 100", []string{"repack", "-adf", "-q", "--depth=100", "--window=50"}},
		{"ref deltas", []string{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adf", "-q"}},
		{"gc", []string{"gc", "-q", "--prune=now"}},
	} {
		git(t, repo, nil, step.args...)
		if deltas(t, repo) < 50 {
			t.Fatalf("%s: only %d deltas; the test proves little", step.name, deltas(t, repo))
		}
		compare(t, step.name, repo, want)
	}
	// The large-offset table: index the pack again with every object past
	// offset 4096 in it (git does so on its own only past 2 GiB).
	for _, idx := range packs(t, repo) {
		pack := strings.TrimSuffix(idx, ".idx") + ".pack"
		before, _ := os.Stat(idx)
		git(t, repo, nil, "index-pack", "--index-version=2,4096", "-o", idx+".new", pack)
		if err := os.Rename(idx+".new", idx); err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(idx)
		if after.Size() <= before.Size() {
			t.Fatalf("index-pack wrote no large offsets (%d -> %d bytes)", before.Size(), after.Size())
		}
	}
	compare(t, "large offsets", repo, want)
}

// unpacked returns a new bare repository holding repo's packed objects as
// loose objects, unpacked by git.
func unpacked(t *testing.T, repo string) string {
	t.Helper()
	loose := t.TempDir()
	git(t, loose, nil, "init", "-q", "--bare", ".")
	for _, idx := range packs(t, repo) {
		data, err := os.ReadFile(strings.TrimSuffix(idx, ".idx") + ".pack")
		if err != nil {
			t.Fatal(err)
		}
		git(t, loose, data, "unpack-objects", "-q")
	}
	return loose
}

func TestMatchesGitLoose(t *testing.T) {
	repo := genRepo(t)
	want := catAll(t, repo)
	loose := unpacked(t, repo)
	compare(t, "loose, written by git", loose, want)

	// Written by odb (stored below 4 KiB, compressed above), read by git.
	mine := t.TempDir()
	git(t, mine, nil, "init", "-q", "--bare", ".")
	db := Open(filepath.Join(mine, "objects"))
	for h, o := range want {
		if err := db.Write(o.typ, o.data, h, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := catAll(t, mine); len(got) != len(want) {
		t.Fatalf("git reads %d objects odb wrote, of %d", len(got), len(want))
	} else {
		for h, o := range want {
			if g := got[h]; g.typ != o.typ || !bytes.Equal(g.data, o.data) {
				t.Fatalf("git reads %s as %v (%d bytes), odb wrote %v (%d bytes)", h, g.typ, len(g.data), o.typ, len(o.data))
			}
		}
	}
	git(t, mine, nil, "fsck", "--strict", "--no-dangling")
	compare(t, "loose, written by odb", mine, want)
}

// TestReadIntoReusesBuffers reads every object of a packed history with
// chains of deltas through ReadLimitInto, two buffers taken in turn (as the
// fetch's history check does), with a delta-base cache of 16 KB, so small that it
// starts over at almost every base and its buffers are reused: each object
// must read as git reads it, and the buffers must be used.
func TestReadIntoReusesBuffers(t *testing.T) {
	repo := genRepo(t)
	want := catAll(t, repo)
	git(t, repo, nil, "repack", "-adf", "-q", "--depth=100", "--window=50")
	if n := deltas(t, repo); n < 50 {
		t.Fatalf("only %d deltas; the test proves little", n)
	}
	defer func(b int) { baseBytes = b }(baseBytes)
	baseBytes = 16 << 10
	db := Open(filepath.Join(repo, "objects"))
	defer db.Close()
	hashes := make([]plumbing.Hash, 0, len(want))
	for h := range want {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	bufs := [2][]byte{make([]byte, 0, 256<<10), make([]byte, 0, 256<<10)}
	reused := 0
	for round := 0; round < 2; round++ { // the second round with every base dropped and read again
		for i, h := range hashes {
			buf := bufs[i%2]
			typ, data, err := db.ReadLimitInto(h, -1, buf)
			o := want[h]
			if err != nil || typ != o.typ || !bytes.Equal(data, o.data) {
				t.Fatalf("%s: odb reads %v (%d bytes, %v), git %v (%d bytes)", h, typ, len(data), err, o.typ, len(o.data))
			}
			if len(data) > 0 && &data[:1][0] == &buf[:1][0] {
				reused++
			}
			held, largest := 0, 0
			for _, b := range db.bases {
				held += cap(b.data)
				largest = max(largest, cap(b.data))
			}
			if held > max(baseBytes, largest) {
				t.Fatalf("after %s the delta-base cache holds %d bytes of buffers, over its %d", h, held, baseBytes)
			}
		}
	}
	if reused < len(hashes) {
		t.Fatalf("the buffers held %d of %d reads", reused, 2*len(hashes))
	}
}

// TestLooseReadsListPacksOnce reads every object of a repository of loose
// objects only: the pack folder is listed at the first lookup, not at each
// (a hook reading 20 staged blobs listed it 20 times and more).
func TestLooseReadsListPacksOnce(t *testing.T) {
	repo := genRepo(t)
	want := catAll(t, repo)
	loose := unpacked(t, repo)
	db := Open(filepath.Join(loose, "objects"))
	defer db.Close()
	for h := range want {
		if _, _, err := db.Read(h); err != nil {
			t.Fatal(err)
		}
	}
	if db.rescans != 1 {
		t.Fatalf("%d reads listed the pack folder %d times, want once", len(want), db.rescans)
	}
}
