package gitstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// BenchmarkCheckFetched is the cost of checking a fetched head's tree of
// 2 000 files from cold (the first sync of a clone); later syncs check only
// the subtrees that changed.
func BenchmarkCheckFetched(b *testing.B) {
	r := newTestRepo(b, "plain")
	s, err := Open(r.open)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var chs []state.Change
	for i := 0; i < 2000; i++ {
		chs = append(chs, state.Change{Path: fmt.Sprintf(".claude/s%02d/f%04d.json", i%20, i), Content: []byte(fmt.Sprintf("{\"i\": %d}\n", i)),
			Class: state.ClassClaudeJSON, Schema: "json", Source: state.SourceRecord, Time: time.Unix(1e9, 0)})
	}
	if _, err := s.Record(chs...); err != nil {
		b.Fatal(err)
	}
	head, err := s.Head(s.StateRef())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		verifiedTrees.Lock()
		verifiedTrees.m = map[plumbing.Hash]struct{}{}
		verifiedTrees.Unlock()
		if err := s.checkFetched("origin", plumbing.NewHash(head)); err != nil {
			b.Fatal(err)
		}
	}
}
