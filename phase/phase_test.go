package phase

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// tier makes a valid tier file of phase n with a status ("x" = invalid).
func tier(n int, status string) TierFile {
	path := fmt.Sprintf("PhaseOutputs/s/phase-%02d-t.json", n)
	if status == "x" {
		return TierFile{Path: path, Phase: n, Status: ReasonInvalid}
	}
	return TierFile{Path: path, Phase: n, Valid: true, Status: status, Snapshot: map[string]any{"tier": n}}
}

func TestRecover(t *testing.T) {
	c, f, p := StatusCompleted, StatusFailed, StatusPartial
	cases := []struct {
		name     string
		files    []TierFile
		from     int
		last     int
		next     string // "3 search", "" for none
		gaps     string // "2:missing 4:failed"
		snapshot int    // the tier whose snapshot is restored, 0 for none
	}{
		{"empty", nil, 0, 0, "1 query", "", 0},
		{"one completed", []TierFile{tier(1, c)}, 0, 1, "2 strategy", "", 1},
		{"contiguous", []TierFile{tier(1, c), tier(2, c), tier(3, c)}, 0, 3, "4 extraction", "", 3},
		{"unordered input", []TierFile{tier(3, c), tier(1, c), tier(2, c)}, 0, 3, "4 extraction", "", 3},
		{"missing tier below the highest", []TierFile{tier(1, c), tier(2, c), tier(4, c)}, 0, 2, "3 search", "3:missing", 2},
		{"missing first tier", []TierFile{tier(2, c), tier(3, c)}, 0, 0, "1 query", "1:missing", 0},
		{"failed tier", []TierFile{tier(1, c), tier(2, f), tier(3, c)}, 0, 1, "2 strategy", "2:failed", 1},
		{"partial top tier", []TierFile{tier(1, c), tier(2, p)}, 0, 1, "2 strategy", "2:partial", 1},
		{"invalid tier", []TierFile{tier(1, c), tier(2, "x"), tier(3, c)}, 0, 1, "2 strategy", "2:invalid", 1},
		{"several gaps, all reported", []TierFile{tier(1, f), tier(3, c), tier(5, p)}, 0, 0, "1 query", "1:failed 2:missing 4:missing 5:partial", 0},
		{"all eight", []TierFile{tier(1, c), tier(2, c), tier(3, c), tier(4, c), tier(5, c), tier(6, c), tier(7, c), tier(8, c)}, 0, 8, "", "", 8},
		{"--from below the last", []TierFile{tier(1, c), tier(2, c), tier(3, c), tier(4, c)}, 2, 2, "3 search", "", 2},
		{"--from hides a gap above it", []TierFile{tier(1, c), tier(2, c), tier(4, f)}, 2, 2, "3 search", "", 2},
		{"--from above the highest", []TierFile{tier(1, c), tier(2, c)}, 5, 2, "3 search", "", 2},
		{"--from keeps gaps below it", []TierFile{tier(1, c), tier(3, c), tier(4, c)}, 3, 1, "2 strategy", "2:missing", 1},
		{"a completed duplicate wins", []TierFile{tier(1, "x"), tier(1, c)}, 0, 1, "2 strategy", "", 1},
		{"a tier outside the table is ignored", []TierFile{tier(1, c), tier(9, c)}, 0, 1, "2 strategy", "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Recover("s", tc.files, tc.from)
			if r.LastCompleted != tc.last {
				t.Errorf("last completed = %d, want %d", r.LastCompleted, tc.last)
			}
			next := ""
			if r.NextPhase != 0 {
				next = fmt.Sprintf("%d %s", r.NextPhase, r.NextLabel)
			}
			if next != tc.next {
				t.Errorf("next = %q, want %q", next, tc.next)
			}
			gaps := ""
			for i, g := range r.Gaps {
				if i > 0 {
					gaps += " "
				}
				gaps += fmt.Sprintf("%d:%s", g.Phase, g.Reason)
			}
			if gaps != tc.gaps {
				t.Errorf("gaps = %q, want %q", gaps, tc.gaps)
			}
			var want any
			if tc.snapshot > 0 {
				want = map[string]any{"tier": tc.snapshot}
			}
			if !reflect.DeepEqual(r.MemorySnapshot, want) {
				t.Errorf("snapshot = %v, want %v", r.MemorySnapshot, want)
			}
			if r.Gaps == nil {
				t.Error("gaps is nil; --json must print []")
			}
		})
	}
}

func TestNewTierFile(t *testing.T) {
	doc := map[string]any{"phase": json.Number("3"), "status": "partial", "memory_snapshot": map[string]any{"k": "v"}}
	got := NewTierFile("PhaseOutputs/s/phase-03-search.json", doc, true)
	want := TierFile{Path: "PhaseOutputs/s/phase-03-search.json", Phase: 3, Label: "search", Status: "partial", Valid: true, Snapshot: map[string]any{"k": "v"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// invalid: present at the tier of its name, no status or snapshot
	got = NewTierFile("PhaseOutputs/s/phase-05-wrong.json", doc, false)
	if got.Phase != 5 || got.Label != "reading" || got.Valid || got.Status != ReasonInvalid || got.Snapshot != nil {
		t.Errorf("invalid file: got %+v", got)
	}
	// a name without a number falls back to the document's phase
	if got := NewTierFile("PhaseOutputs/s/phase-x.json", doc, false); got.Phase != 3 {
		t.Errorf("phase from document: got %d", got.Phase)
	}
}

func TestSessions(t *testing.T) {
	ss := Sessions([]TierFile{
		{Path: "PhaseOutputs/b/phase-02-strategy.json", Phase: 2},
		{Path: "PhaseOutputs/a/phase-01-query.json", Phase: 1},
		{Path: "PhaseOutputs/b/phase-01-query.json", Phase: 1},
	})
	if len(ss) != 2 || ss[0].Name != "a" || ss[1].Name != "b" || ss[1].Dir != "PhaseOutputs/b" {
		t.Fatalf("sessions: %+v", ss)
	}
	if ss[1].Tiers[0].Phase != 1 || ss[1].Tiers[1].Phase != 2 {
		t.Errorf("tiers not in phase order: %+v", ss[1].Tiers)
	}
}
