package gitstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitstore/internal/odb"
)

// TestFastReaderMatchesGit packs a history with deltas (offset deltas, then
// ref deltas) and reads every object back through the fast reader, checking
// each one hashes to its name.
func TestFastReaderMatchesGit(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat(`{"line":"some repeated state content to make deltas worthwhile"}`+"\n", 40)
	for i := 0; i < 40; i++ {
		mustRecord(t, s, change("d/state.json", body+itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)),
			change("d/e/other.json", itoa(int64(i%3)), t0.Add(time.Duration(i)*time.Second)))
	}
	for _, repack := range [][]string{
		{"repack", "-adf", "-q"},
		{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adf", "-q"},
	} {
		runGit(t, r.main, repack...)
		runGit(t, r.main, "prune-packed")
		rd := odb.Open(s.objects.Dir())
		list := runGit(t, r.main, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(deltabase)")
		deltas := 0
		for _, line := range strings.Split(list, "\n") {
			name, base, _ := strings.Cut(line, " ")
			if base != strings.Repeat("0", 40) {
				deltas++
			}
			h := plumbing.NewHash(name)
			typ, data, err := rd.Read(h)
			if err != nil {
				t.Fatalf("%v: read %s: %v", repack, name, err)
			}
			if got := plumbing.ComputeHash(typ, data); got != h {
				t.Fatalf("%v: %s reads back as %s", repack, name, got)
			}
		}
		if deltas == 0 {
			t.Fatalf("%v: no deltas in the pack; the test proves nothing", repack)
		}
		rd.Close()
	}
	if _, _, err := s.objects.Read(plumbing.NewHash(strings.Repeat("ab", 20))); !errors.Is(err, odb.ErrNotFound) {
		t.Fatalf("missing object: %v", err)
	}
}
