package conflict

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

func TestLaterTiesByCommitID(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	a := Stamp{Time: t0.Add(100 * time.Millisecond), Commit: "aaaa"}
	b := Stamp{Time: t0.Add(900 * time.Millisecond), Commit: "0000"}
	if !Later(a, b) || Later(b, a) {
		t.Fatal("sub-second times must decide before commit ids")
	}
	c := Stamp{Time: a.Time, Commit: "ffff"}
	if !Later(a, c) || Later(c, a) {
		t.Fatal("equal times go to the larger commit id")
	}
}

// A recorded time more than ClockSkew ahead of the clock counts as now, or
// as the earlier time of a commit built on it, and says so; any other
// time counts as it is, however early the commits built on it.
func TestBoundTakesTimesAheadAsNow(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	forged := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	early := now.Add(-time.Hour)
	for _, tc := range []struct {
		t, limit time.Time
		by       string
		want     time.Time
		wantNote string
	}{
		{now.Add(-time.Hour), now, "", now.Add(-time.Hour), ""},
		{now.Add(-time.Minute), early, "0123456789abcdef", now.Add(-time.Minute), ""}, // a slow clock built on it lowers nothing
		{now.Add(ClockSkew), now, "", now.Add(ClockSkew), ""},
		{now.Add(ClockSkew + time.Nanosecond), now, "", now, "its time 2026-11-22T09:35:00.000000001Z is ahead of this machine's clock; taken as now"},
		{forged, now, "", now, "its time 2099-01-01T00:00:00Z is ahead of this machine's clock; taken as now"},
		{forged, early, "0123456789abcdef", early, "its time 2099-01-01T00:00:00Z is ahead of this machine's clock; taken as that of 0123456789, built on it"},
		{forged, now.Add(time.Hour), "0123456789abcdef", now, "its time 2099-01-01T00:00:00Z is ahead of this machine's clock; taken as now"},
	} {
		s := Bound("c1", tc.t, now, tc.limit, tc.by)
		if !s.Time.Equal(tc.want) || s.Commit != "c1" || s.Note() != tc.wantNote {
			t.Errorf("Bound(%v, %v, %q) = %v, note %q; want %v, %q", tc.t, tc.limit, tc.by, s.Time, s.Note(), tc.want, tc.wantNote)
		}
	}
	// taken as now, a version from 2099 no longer beats an edit made later
	later := Stamp{Time: now.Add(time.Minute), Commit: "0000"}
	if Later(later, Bound("ffff", forged, now, now, "")) {
		t.Error("a bounded 2099 still wins over a later edit")
	}
}

func TestMergeMemoryKeepsBothSidesLines(t *testing.T) {
	base := "# Memory\n\n## Learnings\n- one\n- two\n\n## Notes\nSome text.\n"
	a := "# Memory\n\n## Learnings\n- one\n- two\n- from a\n\n## Notes\nSome text.\n"
	b := "# Memory\n\n## Learnings\n- one\n- two\n- from b\n  continued b\n\n## Notes\nSome text.\n- note b\n"
	got, err := MergeMemory([]byte(base), []byte(a), []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Memory\n\n## Learnings\n- one\n- two\n- from a\n- from b\n  continued b\n\n## Notes\nSome text.\n- note b\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// the other order: b earlier, a later
	got, err = MergeMemory([]byte(base), []byte(b), []byte(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"- from a", "- from b", "  continued b", "- note b"} {
		if !strings.Contains(string(got), l+"\n") {
			t.Fatalf("%q lost:\n%s", l, got)
		}
	}
	if strings.Index(string(got), "- from b") > strings.Index(string(got), "## Notes") {
		t.Fatalf("b's item left its section:\n%s", got)
	}
}

func TestMergeMemoryBytesKept(t *testing.T) {
	base := "---\ntitle: x\n---\r\n# M\r\n\r\n## Learnings\r\n- one\r\n| a | b |\r\n"
	a := base + "## New\r\n- a1"
	b := strings.Replace(base, "- one\r\n", "- one\r\n- b1\r\n", 1)
	got, err := MergeMemory([]byte(base), []byte(a), []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	// a's last line, without its end, stays so, last (it may be a line
	// still being written: TestMergeMemoryKeepsUnendedTailLast)
	want := strings.Replace(base, "- one\r\n", "- one\r\n- b1\r\n", 1) + "## New\r\n- a1"
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// both added the same line: once
	got, _ = MergeMemory([]byte(base), []byte(b), []byte(b+"x\r\n"))
	if strings.Count(string(got), "- b1") != 1 {
		t.Fatalf("duplicated: %q", got)
	}
}

func TestMergeGraph(t *testing.T) {
	base := `{"type":"entity","name":"A","entityType":"t","observations":["a1","a2"]}
{"type":"entity","name":"Gone","entityType":"t","observations":[]}
{"type":"relation","from":"A","to":"Gone","relationType":"r"}
`
	// earlier: adds an observation to A, deletes a2, adds entity E, deletes Gone and its relation
	earlier := `{"type":"entity","name":"A","entityType":"t","observations":["a1","e1"]}
{"type":"entity","name":"E","entityType":"t","observations":["x"]}
{"type":"relation","from":"A","to":"E","relationType":"r"}
`
	// later: adds an observation to A and an entity L
	later := `{"type":"entity","name":"A","entityType":"t","observations":["a1","a2","l1"]}
{"type":"entity","name":"Gone","entityType":"t","observations":[]}
{"type":"entity","name":"L","entityType":"t","observations":[]}
{"type":"relation","from":"A","to":"Gone","relationType":"r"}
`
	merged, lost := MergeGraph([]byte(base), []byte(earlier), []byte(later))
	got := string(merged)
	if len(lost) != 0 {
		t.Errorf("lost %v", lost)
	}
	want := `{"type":"entity","name":"A","entityType":"t","observations":["a1","l1","e1"]}
{"type":"entity","name":"L","entityType":"t","observations":[]}
{"type":"entity","name":"E","entityType":"t","observations":["x"]}
{"type":"relation","from":"A","to":"E","relationType":"r"}
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestResolveAppendOnlyKeepsBoth(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	taken := map[string]bool{"P/x/001-plan.yaml": true, "P/x/002-design.yaml": true}
	in := PathInput{Path: "P/x/002-design.yaml", Class: state.ClassPhaseOutcome,
		Ours:   Version{Present: true, Data: []byte("a"), Stamp: Stamp{Time: t0.Add(time.Millisecond), Commit: "1"}},
		Theirs: Version{Present: true, Data: []byte("b"), Stamp: Stamp{Time: t0, Commit: "2"}},
		Taken:  func(p string) bool { return taken[p] }}
	out, err := Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Take != TakeBoth || out.Rename != "P/x/003-design.yaml" || out.LaterIsTheirs {
		t.Fatalf("%+v", out)
	}
}

func TestResolveHistoryRule(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	rule := func(prev, next []byte) string {
		if string(prev) == "completed" && string(next) == "in_progress" {
			return "status cannot change from completed to in_progress"
		}
		return ""
	}
	in := PathInput{Path: "i.json", Class: state.ClassInitiative, Rule: rule,
		Base:   Version{Present: true, Data: []byte("in_progress")},
		Ours:   Version{Present: true, Data: []byte("completed"), Stamp: Stamp{Time: t0, Commit: "1"}},
		Theirs: Version{Present: true, Data: []byte("in_progress"), Stamp: Stamp{Time: t0.Add(time.Second), Commit: "2"}}}
	out, _ := Resolve(in)
	if out.Take != TakeOurs || out.Why == "" {
		t.Fatalf("regression taken: %+v", out)
	}
	in.Ours, in.Theirs = in.Theirs, in.Ours
	out, _ = Resolve(in)
	if out.Take != TakeTheirs || out.Why == "" {
		t.Fatalf("the other machine disagrees: %+v", out)
	}
}
