package gitstore

import (
	"strings"
	"testing"
	"time"
)

// Two versions recorded in the same second: the Strata-Time trailer (the
// writer's time to the nanosecond) decides, whatever the commit ids say,
// and gives the same answer from both sides.
func TestMergeDecidesBySubSecondTime(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const p = ".claude/workflow-state.json"
	mustRecord(t, s, change(p, "base", t0))
	base, _ := s.Head(s.StateRef())
	mustRecord(t, s, change(p, "later", t0.Add(1900*time.Millisecond)))
	later, _ := s.Head(s.StateRef())
	runGit(t, r.main, "update-ref", s.StateRef(), base)
	mustRecord(t, s, change(p, "earlier", t0.Add(1100*time.Millisecond)))
	earlier, _ := s.Head(s.StateRef())

	got := runGit(t, r.main, "log", "-1", "--format=%(trailers:key=Strata-Time,valueonly)", later)
	if strings.TrimSpace(got) != "2026-03-01T12:00:01.900000000Z" {
		t.Fatalf("Strata-Time trailer = %q", got)
	}
	for _, side := range [][2]string{{earlier, later}, {later, earlier}} {
		m, err := s.PlanMerge(side[0], side[1], t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Paths) != 1 || !m.Paths[0].ByTime {
			t.Fatalf("plan = %+v", m.Paths)
		}
		mp := m.Paths[0]
		if mp.Winner != later || mp.Loser != earlier {
			t.Errorf("from %s: winner %s, loser %s; want the later recording %s to win", side[0][:7], mp.Winner[:7], mp.Loser[:7], later[:7])
		}
		if !mp.WinnerTime.Equal(t0.Add(1900 * time.Millisecond)) {
			t.Errorf("winner time %v", mp.WinnerTime)
		}
	}
}
