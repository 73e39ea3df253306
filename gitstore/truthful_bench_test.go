package gitstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// truthfulChain records, in a fresh repository, one commit of files files
// in one folder, then commits changes of one file each (RecordEach, as the
// watcher writes them), and returns the store, the first commit and the
// head.
func truthfulChain(b *testing.B, files, commits int) (*Store, plumbing.Hash, plumbing.Hash) {
	b.Helper()
	r := newTestRepo(b, "plain")
	s, err := Open(r.open)
	if err != nil {
		b.Fatal(err)
	}
	var chs []state.Change
	for i := 0; i < files; i++ {
		chs = append(chs, change(fmt.Sprintf(".claude/f%04d.json", i), `{"n": -1}`, t0))
	}
	first := plumbing.NewHash(mustRecord(b, s, chs...)[0].Commit)
	for done := 0; done < commits; done += 1000 {
		chs = chs[:0]
		for i := done; i < min(commits, done+1000); i++ {
			chs = append(chs, change(fmt.Sprintf(".claude/f%04d.json", i%files), fmt.Sprintf(`{"n": %d}`, i), t0.Add(time.Duration(i)*time.Second)))
		}
		if _, err := s.RecordEach(chs); err != nil {
			b.Fatal(err)
		}
	}
	head, err := s.readRef(s.StateRef())
	if err != nil {
		b.Fatal(err)
	}
	return s, first, head
}

// checkFrom runs what Fetch's check of trailers runs for head when the
// local ref stands at local, and returns the commits checked.
func checkFrom(b *testing.B, s *Store, local, head plumbing.Hash) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	commits, err := s.newCommits(local, head)
	if err != nil {
		b.Fatal(err)
	}
	hc := &historyCheck{s: s, budget: maxCheckEntries}
	for _, ci := range commits {
		if p, why := hc.commit(ci); why != "" {
			b.Fatalf("%s: %s: %s", ci.hash, p, why)
		}
	}
	return len(commits)
}

// BenchmarkCheckNewCommits is the check sync runs on what a fetch brings:
// 1 000 commits of one changed file each in a folder of 1 000 files, above
// the local head (a day of a watcher's records), and, from nothing, the
// first sync of a history of 10 000 such commits. It reports ns/commit.
func BenchmarkCheckNewCommits(b *testing.B) {
	for _, tc := range []struct {
		name    string
		commits int
		first   bool
	}{{"1000-above-local", 1000, false}, {"10000-first-sync", 10000, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s, first, head := truthfulChain(b, 1000, tc.commits)
			local := first
			if tc.first {
				local = plumbing.ZeroHash
			}
			n := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				clear(s.commits) // each sync is a new process: nothing cached
				clear(s.trees)
				n = checkFrom(b, s, local, head)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/commit")
		})
	}
}
