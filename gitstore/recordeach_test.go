package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// RecordEach of a large batch writes one commit per change, in order, each
// tree the one before with that change applied; every object goes into one
// pack (no loose object), git reads it all (fsck --strict), git gc still
// works on it, and the history reads back through a fresh Store. A change
// that changes nothing writes no commit.
func TestRecordEachOnePack(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		mustRecord(t, s, change("a/0.json", "old", t0))
		loose0 := looseCount(t, r.common)
		var chs []state.Change
		for i := 0; i < 60; i++ {
			chs = append(chs, change("a/"+strconv.Itoa(i%30)+".json", "v"+strconv.Itoa(i), t0.Add(time.Duration(i+1)*time.Second)))
		}
		chs = append(chs, change("a/1.json", "v31", t0.Add(time.Minute)), deletion("a/2.json", t0.Add(2*time.Minute)), deletion("zz", t0))
		es, err := s.RecordEach(chs)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != len(chs) || es[60].Commit != "" || es[62].Commit != "" || es[61].Action != state.ActionDelete {
			t.Fatalf("entries: %d, unchanged %q %q, delete %v", len(es), es[60].Commit, es[62].Commit, es[61].Action)
		}
		if n := looseCount(t, r.common); n != loose0 {
			t.Fatalf("%d loose objects written", n-loose0)
		}
		if packs, _ := filepath.Glob(filepath.Join(r.common, "objects", "pack", "pack-*.pack")); len(packs) != 1 {
			t.Fatalf("packs: %v", packs)
		}
		head := strings.TrimSpace(runGit(t, r.main, "rev-parse", r.ref))
		if head != es[61].Commit {
			t.Fatalf("head %s, last entry %s", head, es[61].Commit)
		}
		if n := strings.TrimSpace(runGit(t, r.main, "rev-list", "--count", r.ref)); n != "62" {
			t.Fatalf("%s commits, want 62", n)
		}
		// Each commit changes exactly its own path.
		if got := runGit(t, r.main, "diff-tree", "--no-commit-id", "--name-status", "-r", es[30].Commit); strings.TrimSpace(got) != "M\ta/0.json" {
			t.Fatalf("commit 30 changes:\n%s", got)
		}
		fsck(t, r.main)
		s2, err := Open(r.open)
		if err != nil {
			t.Fatal(err)
		}
		if data, err := s2.ReadFile(es[59].Commit, "a/29.json", anySize); err != nil || string(data) != "v59" {
			t.Fatalf("read back: %q %v", data, err)
		}
		if _, err := s2.ReadFile(head, "a/2.json", anySize); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("deleted path: %v", err)
		}
		if _, err := s.RecordEach(chs[60:61]); !errors.Is(err, state.ErrUnchanged) {
			t.Fatalf("again: %v", err)
		}
		runGit(t, r.main, "gc", "-q")
		fsck(t, r.main)
		if data, err := s.ReadFile(es[59].Commit, "a/29.json", anySize); err != nil || string(data) != "v59" {
			t.Fatalf("after gc: %q %v", data, err)
		}
	})
}

// A batch under PackMin objects is written loose, as Record writes.
func TestRecordEachSmallStaysLoose(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	loose0 := looseCount(t, r.common)
	if _, err := s.RecordEach([]state.Change{change("x.json", "1", t0)}); err != nil {
		t.Fatal(err)
	}
	if n := looseCount(t, r.common) - loose0; n != 3 {
		t.Fatalf("%d loose objects, want blob, tree, commit", n)
	}
	if packs, _ := filepath.Glob(filepath.Join(r.common, "objects", "pack", "*.pack")); len(packs) != 0 {
		t.Fatalf("packs: %v", packs)
	}
	fsck(t, r.main)
}

func looseCount(tb testing.TB, common string) int {
	tb.Helper()
	n := 0
	dirs, _ := filepath.Glob(filepath.Join(common, "objects", "[0-9a-f][0-9a-f]"))
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a background git prune-packed removed it since the Glob
		}
		if err != nil {
			tb.Fatal(err)
		}
		n += len(ents)
	}
	return n
}

// Every PackInterval commits a background geometric repack rolls the loose
// objects and the small packs of recent records into one pack; with
// gc.auto = 0 the repository is left alone.
func TestRepackTrigger(t *testing.T) {
	oldP, oldG := PackInterval, GCInterval
	PackInterval, GCInterval = 10, 1000
	defer func() { PackInterval, GCInterval = oldP, oldG }()
	for _, off := range []bool{false, true} {
		r := newTestRepo(t, "plain")
		if off {
			runGit(t, r.main, "config", "gc.auto", "0")
		}
		s, err := Open(r.open)
		if err != nil {
			t.Fatal(err)
		}
		before := repackStarted.Load()
		for i := 0; i < 5; i++ { // 5 loose changes, then a packed batch of 6: the count passes 10
			mustRecord(t, s, change("d/f.json", itoa(int64(i)), t0))
		}
		var chs []state.Change
		for i := 0; i < 6; i++ {
			chs = append(chs, change("d/g"+itoa(int64(i))+".json", "x", t0))
		}
		if _, err := s.RecordEach(chs); err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if off {
			want = 0
		}
		if n := repackStarted.Load() - before; n != want {
			t.Fatalf("gc.auto off %v: repack started %d times, want %d", off, n, want)
		}
		if off {
			continue
		}
		deadline := time.Now().Add(30 * time.Second)
		for looseCount(t, r.common) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := looseCount(t, r.common); n > 0 {
			t.Fatalf("%d loose objects left after the repack", n)
		}
		fsck(t, r.main)
		if data, err := s.ReadFile(s.StateRef(), "d/g5.json", anySize); err != nil || string(data) != "x" {
			t.Fatalf("after repack: %q %v", data, err)
		}
	}
}
