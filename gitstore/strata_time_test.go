package gitstore

import (
	"strings"
	"testing"
	"time"
)

// A Strata-Time is read in the one form strata has written it in (nine
// fraction digits, UTC), from 1970 on; anything else is malformed, which
// the check of fetched commits refuses (badTime).
func TestParseTimeTakesOnlyStrataForm(t *testing.T) {
	for _, at := range []time.Time{
		t0,
		t0.Add(123456789 * time.Nanosecond),
		time.Unix(0, 0),
		time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("CET", 3600)), // written in UTC
	} {
		var b strings.Builder
		writeTime(&b, at)
		v, ok := timeValue("record x\n\n" + b.String())
		if !ok {
			t.Fatalf("no Strata-Time in %q", b.String())
		}
		got, ok := parseTime(v)
		if !ok || !got.Equal(at) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", v, got, ok, at)
		}
		if why := badTime("record x\n\n" + b.String()); why != "" {
			t.Errorf("badTime(%q) = %q", v, why)
		}
	}
	for _, v := range []string{
		"-1",
		"",
		"2099-01-01T00:00:00Z",
		"2026-11-22T10:00:00.00000000Z",
		"2026-11-22T10:00:00.0000000000Z",
		"2026-11-22T10:00:00.000000000+01:00",
		"2026-11-22T10:00:00.000000000+00:00",
		"2026-11-22t10:00:00.000000000z",
		"2026-11-22 10:00:00.000000000Z",
		" 2026-11-22T10:00:00.000000000Z",
		"2026-11-22T10:00:00.000000000Z ",
		"2026-11-22T10:00:00.000000000Z\r",
		"2026-02-30T10:00:00.000000000Z",
		"1969-12-31T23:59:59.999999999Z",
		"0000-01-01T00:00:00.000000000Z",
		"+12026-01-01T00:00:00.000000000Z",
		"1795652428",
	} {
		if got, ok := parseTime(v); ok {
			t.Errorf("parseTime(%q) = %v, want malformed", v, got)
		}
		msg := "record x\n\nStrata-Path: x\nStrata-Time: " + v + "\n"
		if why := badTime(msg); !strings.HasPrefix(why, "its Strata-Time ") || strings.Contains(why, "\n") {
			t.Errorf("badTime(%q) = %q, want one line", v, why)
		}
	}
	if why := badTime("record x\n\nStrata-Path: x\n"); why != "" {
		t.Errorf("a commit older than the trailer: badTime = %q", why)
	}
	long := strings.Repeat("9", 5000)
	if why := badTime("x\n\nStrata-Time: " + long + "\n"); len(why) > 200 {
		t.Errorf("badTime quotes %d bytes of a long value", len(why))
	}
}

// A side's time ahead of this machine's clock (a peer's clock set to 2099,
// or a forged trailer) counts in a decision as now, on either side, and the
// decision says so; once a commit is built on that version (the merge that
// took it, or any later record), it counts as that commit's time, so an
// edit made after it wins the next decision. A time not ahead of the clock
// counts as it is.
func TestMergeBoundsTimesAheadOfTheClock(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const p, q = ".claude/workflow-state.json", ".claude/other.json"
	forged := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	mustRecord(t, s, change(p, "base", t0))
	base, _ := s.Head(s.StateRef())
	mustRecord(t, s, change(p, "ahead", forged))
	ahead, _ := s.Head(s.StateRef())
	runGit(t, r.main, "update-ref", s.StateRef(), base)
	markTaken(t, s)
	mustRecord(t, s, change(p, "mine", t0.Add(10*time.Minute)))
	mine, _ := s.Head(s.StateRef())

	now := t0.Add(20 * time.Minute)
	for _, side := range [][2]string{{mine, ahead}, {ahead, mine}} {
		m, err := s.PlanMerge(side[0], side[1], now)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Paths) != 1 || !m.Paths[0].ByTime {
			t.Fatalf("plan = %+v", m.Paths)
		}
		mp := m.Paths[0]
		// taken as now, it still wins over an edit made before now
		if mp.Winner != ahead || !mp.WinnerTime.Equal(now) {
			t.Errorf("from %s: winner %s at %v, want %s at now %v", side[0][:7], mp.Winner[:7], mp.WinnerTime, ahead[:7], now)
		}
		if want := "its time 2099-01-01T00:00:00Z is ahead of this machine's clock; taken as now"; mp.WinnerNote != want || mp.LoserNote != "" {
			t.Errorf("notes %q, %q; want %q for the winner", mp.WinnerNote, mp.LoserNote, want)
		}
		if line := decisionLine(mp); !strings.HasSuffix(line, "\n  "+ahead[:10]+": "+mp.WinnerNote) {
			t.Errorf("decision line %q does not say the time was taken as now", line)
		}
		if ds := decisionsOf("sync with origin\n\n" + decisionLine(mp) + "\n"); len(ds) != 1 || ds[0].Winner != ahead || ds[0].Loser != mine {
			t.Errorf("the decided line reads back as %+v", ds)
		}
	}

	// a record built on the version from 2099, 20 minutes after t0; an
	// edit elsewhere 30 minutes after t0 is later
	runGit(t, r.main, "update-ref", s.StateRef(), ahead)
	markTaken(t, s)
	mustRecord(t, s, change(q, "other", t0.Add(20*time.Minute)))
	built, _ := s.Head(s.StateRef())
	runGit(t, r.main, "update-ref", s.StateRef(), base)
	markTaken(t, s)
	mustRecord(t, s, change(p, "mine later", t0.Add(30*time.Minute)))
	later, _ := s.Head(s.StateRef())
	for _, side := range [][2]string{{later, built}, {built, later}} {
		m, err := s.PlanMerge(side[0], side[1], t0.Add(40*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var mp *MergePath
		for i := range m.Paths {
			if m.Paths[i].Path == p {
				mp = &m.Paths[i]
			}
		}
		if mp == nil || !mp.ByTime {
			t.Fatalf("plan = %+v", m.Paths)
		}
		if mp.Winner != later || mp.Loser != ahead || !mp.LoserTime.Equal(t0.Add(20*time.Minute)) {
			t.Errorf("from %s: winner %s, loser %s at %v; want the later edit %s to win over %s, taken as of %s",
				side[0][:7], mp.Winner[:7], mp.Loser[:7], mp.LoserTime, later[:7], ahead[:7], built[:7])
		}
		if want := "its time 2099-01-01T00:00:00Z is ahead of this machine's clock; taken as that of " + built[:10] + ", built on it"; mp.LoserNote != want {
			t.Errorf("loser note %q, want %q", mp.LoserNote, want)
		}
	}

	// within the allowance for clock skew a time counts as it is
	runGit(t, r.main, "update-ref", s.StateRef(), base)
	markTaken(t, s)
	mustRecord(t, s, change(p, "skewed", t0.Add(44*time.Minute)))
	skewed, _ := s.Head(s.StateRef())
	m, err := s.PlanMerge(later, skewed, t0.Add(40*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if mp := m.Paths[0]; mp.Winner != skewed || !mp.WinnerTime.Equal(t0.Add(44*time.Minute)) || mp.WinnerNote != "" {
		t.Errorf("a time 4 minutes ahead: winner %s at %v, note %q; want it as it is", mp.Winner[:7], mp.WinnerTime, mp.WinnerNote)
	}

	// a time not ahead of the clock counts as it is, even under a commit
	// from a slower clock
	runGit(t, r.main, "update-ref", s.StateRef(), base)
	markTaken(t, s)
	mustRecord(t, s, change(p, "honest", t0.Add(35*time.Minute)))
	honest, _ := s.Head(s.StateRef())
	mustRecord(t, s, change(q, "slow clock", t0.Add(time.Minute)))
	slow, _ := s.Head(s.StateRef())
	if m, err = s.PlanMerge(later, slow, t0.Add(40*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, mp := range m.Paths {
		if mp.Path == p && (mp.Winner != honest || !mp.WinnerTime.Equal(t0.Add(35*time.Minute)) || mp.WinnerNote != "") {
			t.Errorf("under a slower clock: winner %s at %v, note %q; want %s as it is", mp.Winner[:7], mp.WinnerTime, mp.WinnerNote, honest[:7])
		}
	}
}
