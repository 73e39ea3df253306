package graph

import (
	"slices"
	"testing"
)

func TestEndings(t *testing.T) {
	for _, c := range []struct {
		in   string
		e    Ending
		lf   string
		crlf string
	}{
		{"", EndingNone, "", ""},
		{"a", EndingNone, "a", "a"},
		{"a\nb", EndingLF, "a\nb", "a\r\nb"},
		{"a\r\nb\r\n", EndingCRLF, "a\nb\n", "a\r\nb\r\n"},
		{"a\r\nb\n", EndingMixed, "a\nb\n", "a\r\nb\r\n"},
		{"a\r\r\nb\r", EndingCRLF, "a\nb", "a\r\r\nb"},
	} {
		if got := EndingOf([]byte(c.in)); got != c.e {
			t.Errorf("EndingOf(%q) = %v, want %v", c.in, got, c.e)
		}
		if got := string(WithEnding([]byte(c.in), EndingLF, false)); got != c.lf {
			t.Errorf("LF(%q) = %q, want %q", c.in, got, c.lf)
		}
		if got := string(WithEnding([]byte(c.in), EndingCRLF, false)); got != c.crlf {
			t.Errorf("CRLF(%q) = %q, want %q", c.in, got, c.crlf)
		}
		if got := string(WithEnding([]byte(c.in), EndingMixed, false)); got != c.in {
			t.Errorf("mixed changed %q to %q", c.in, got)
		}
	}
}

// A relation's own members are merged as an entity's are; what makes it the
// relation (type, from, to, relationType) is never touched.
func TestMergeRelationLine(t *testing.T) {
	base := `{"type":"relation","from":"a","to":"b","relationType":"r","note":"n","w":1}`
	earlier := `{"type":"relation","from":"a","to":"b","relationType":"r","note":"e","w":1,"new":true}`
	later := `{"from":"a","type":"relation","to":"b","relationType":"r","note":"n","w":2}`
	got, lost := MergeRelationLine([]byte(base), []byte(earlier), []byte(later), true)
	want := `{"from":"a","type":"relation","to":"b","relationType":"r","note":"e","w":2,"new":true}`
	if string(got) != want || len(lost) != 0 {
		t.Errorf("got %s, lost %+v", got, lost)
	}
	later = `{"type":"relation","from":"a","to":"b","relationType":"r","w":1,"note":"l"}`
	earlier = `{"type":"relation","from":"a","to":"b","relationType":"r","note":"e"}`
	got, lost = MergeRelationLine([]byte(base), []byte(earlier), []byte(later), true)
	want = `{"type":"relation","from":"a","to":"b","relationType":"r","note":"l"}` // w removed on the earlier side
	if string(got) != want || !slices.Equal(lost, []MemberLoss{{Key: "note", Earlier: `"e"`, Kept: `"l"`}}) {
		t.Errorf("got %s, lost %+v", got, lost)
	}
	// the earlier side removed w, the later changed it: named
	later = `{"type":"relation","from":"a","to":"b","relationType":"r","note":"n","w":3}`
	got, lost = MergeRelationLine([]byte(base), []byte(earlier), []byte(later), true)
	want = `{"type":"relation","from":"a","to":"b","relationType":"r","note":"e","w":3}`
	if string(got) != want || !slices.Equal(lost, []MemberLoss{{Key: "w", Kept: "3"}}) {
		t.Errorf("got %s, lost %+v", got, lost)
	}
}

func TestLines(t *testing.T) {
	data := "{\"type\":\"entity\",\"name\":\"X\",\"entityType\":\"t\",\"observations\":[]}\r\n\nx\n" +
		`{"type":"entity","name":"X","entityType":"t","observations":["2"]}` + "\n" +
		`{"type":"relation","from":"X","to":"X","relationType":"r"}`
	ls := Lines([]byte(data))
	var got []string
	for _, l := range ls {
		f := "-"
		if l.First {
			f = "F"
		}
		got = append(got, f+l.Key)
	}
	want := []string{"F" + EntityKey("X"), "-", "-", "-" + EntityKey("X"), "F" + RelationKey(Relation{"X", "X", "r"})}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
