package gitstore

import (
	"os"
	"testing"
	"time"
)

// TestAtFromFile: a fresh Store answers At from the index file without
// loading it, with the answers of the loaded index, also when commit times
// go backwards; a damaged record in the scanned range, or a file that lags
// the ref, sends it to the usual path.
func TestAtFromFile(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Minutes 0..29, then a clock set back: 10..19 again, then 30..39.
	var mins []int
	for i := 0; i < 30; i++ {
		mins = append(mins, i)
	}
	for i := 10; i < 20; i++ {
		mins = append(mins, i)
	}
	for i := 30; i < 40; i++ {
		mins = append(mins, i)
	}
	for i, m := range mins {
		mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(m)*time.Minute)))
	}
	ref := s.StateRef()
	var want []string
	for m := -1; m < 41; m++ {
		h, _ := s.At(ref, t0.Add(time.Duration(m)*time.Minute+30*time.Second)) // the loaded index
		want = append(want, h)
	}
	fresh := func() *Store {
		s2, err := Open(r.open)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s2.Close() })
		return s2
	}
	s2 := fresh()
	for m := 0; m < 41; m++ {
		ts := t0.Add(time.Duration(m)*time.Minute + 30*time.Second)
		h, ok := s2.atFromFile(ref, ts.Unix())
		if !ok || h != want[m+1] {
			t.Errorf("minute %d: atFromFile = %s, %v; the loaded index says %s", m, h, ok, want[m+1])
		}
		if got, _ := s2.At(ref, ts); got != want[m+1] {
			t.Errorf("minute %d: At = %s, want %s", m, got, want[m+1])
		}
		if s2.indexes[ref] != nil {
			t.Fatalf("minute %d: At loaded the index", m)
		}
	}
	// Before the first commit: the usual path says not found.
	if got, err := s2.At(ref, t0.Add(-time.Minute)); err == nil {
		t.Errorf("At before the first commit = %s", got)
	}
	// A damaged record among the newest: the file is not trusted.
	file := s.indexFile(ref)
	b, _ := os.ReadFile(file)
	b[len(b)-3*idxRecSize+5] ^= 0x40
	os.WriteFile(file, b, 0o644)
	if _, ok := fresh().atFromFile(ref, t0.Add(5*time.Minute).Unix()); ok {
		t.Error("atFromFile answered from a damaged file")
	}
	if got, _ := fresh().At(ref, t0.Add(5*time.Minute+30*time.Second)); got != want[6] {
		t.Errorf("At after damage = %s, want %s", got, want[6])
	}
	// The ref moves on without the file: At catches up through the usual path.
	h := mustRecord(t, s, change("f.json", "new", t0.Add(50*time.Minute)))[0].Commit
	s3 := fresh()
	if _, ok := s3.atFromFile(ref, t0.Add(60*time.Minute).Unix()); ok {
		t.Error("atFromFile answered from a file that lags the ref")
	}
	if got, _ := s3.At(ref, t0.Add(60*time.Minute)); got != h {
		t.Errorf("At after the ref moved = %s, want %s", got, h)
	}
}
