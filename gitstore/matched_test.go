package gitstore

import (
	"errors"
	"testing"
	"time"
)

// markTaken marks the state ref's head, moved by git in a test, as the one
// the work tree follows, as the engine does once it took the move: the
// store's next move starts from it.
func markTaken(t *testing.T, s *Store) {
	t.Helper()
	h, err := s.Head(s.StateRef())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkMatched(h); err != nil {
		t.Fatal(err)
	}
}

// A move of the state ref by something other than strata (git update-ref,
// a push into this repository) makes strata's next move refuse, naming the
// head strata left; once marked taken, the move goes ahead. The rejected
// ref is not watched.
func TestMoveFromOutsideRefused(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	first := mustRecord(t, s, change("x.json", `{"v":1}`, t0))[0].Commit
	second := mustRecord(t, s, change("x.json", `{"v":2}`, t0.Add(time.Minute)))[0].Commit
	third := mustRecord(t, s, change("x.json", `{"v":3}`, t0.Add(2*time.Minute)))[0].Commit
	if from, to, ok := s.Matched(); !ok || from != second || to != third {
		t.Fatalf("matched %s %s %v, want %s %s", from, to, ok, second, third)
	}
	// rewound past second, the head the last move went from (a ref back at
	// that one is taken for the move killed before its rename)
	runGit(t, r.main, "update-ref", s.StateRef(), first)
	_, err = s.Record(change("x.json", `{"v":4}`, t0.Add(3*time.Minute)))
	var outside *OutsideMoveError
	if !errors.As(err, &outside) || outside.Head != first || outside.Matched != third {
		t.Fatalf("record after an outside move: %v, want an OutsideMoveError from %s to %s", err, third, first)
	}
	if h, _ := s.Head(s.StateRef()); h != first {
		t.Fatalf("the ref moved to %s", h)
	}
	if _, err := s.RejectEach([]Rejection{{Change: change("x.json", `{`, t0.Add(4*time.Minute)), Problems: []string{"x.json: bad"}}}); err != nil {
		t.Fatalf("the rejected ref is not watched: %v", err)
	}
	markTaken(t, s)
	mustRecord(t, s, change("x.json", `{"v":4}`, t0.Add(5*time.Minute)))
}
