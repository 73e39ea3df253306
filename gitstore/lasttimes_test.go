package gitstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// TestLastTimesAgreesWithLog: one walk for many paths gives, for each, the
// time Log gives for it alone (changes, deletions, paths recorded together,
// paths never recorded), with few and with more than 64 paths asked.
func TestLastTimesAgreesWithLog(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		var all []string
		for i := 0; i < 80; i++ {
			all = append(all, fmt.Sprintf(".claude/s%02d.json", i))
		}
		first := make([]state.Change, 0, len(all))
		for _, p := range all {
			first = append(first, change(p, `{"v":1}`, t0))
		}
		mustRecord(t, s, first...)
		mustRecord(t, s, change(all[3], `{"v":2}`, t0.Add(time.Minute)))
		mustRecord(t, s, deletion(all[5], t0.Add(2*time.Minute)))
		mustRecord(t, s, change(all[3], `{"v":3}`, t0.Add(3*time.Minute)), change(all[7], `{"v":2}`, t0.Add(3*time.Minute)))
		asked := append(append([]string{}, all...), ".claude/never.json")
		for _, paths := range [][]string{asked, {all[3], all[5], all[9], ".claude/never.json"}} {
			got, err := s.LastTimes(s.StateRef(), paths)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				es, err := s.Log(s.StateRef(), LogQuery{Path: p, Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				tm, ok := got[p]
				switch {
				case len(es) == 0 && ok:
					t.Errorf("%s: LastTimes %v, Log nothing", p, tm)
				case len(es) > 0 && (!ok || !tm.Equal(es[0].Time)):
					t.Errorf("%s: LastTimes %v (%v), Log %v", p, tm, ok, es[0].Time)
				}
			}
		}
		if got, _ := s.LastTimes(s.StateRef(), []string{all[3]}); !got[all[3]].Equal(t0.Add(3 * time.Minute)) {
			t.Errorf("%s last recorded %v, want %v", all[3], got[all[3]], t0.Add(3*time.Minute))
		}
	})
}
