package gitstore

import (
	"math/rand/v2"
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
	// Only the records after the last time inversion (the clock set back
	// ends at record 39) are binary-searched; the others are scanned.
	if from := s.indexes[ref].recs[len(mins)-1].inv; from != 40 {
		t.Errorf("the last record names record %d as the end of the last inversion, want 40", from)
	}
	// A damaged record on the way: the file is not trusted. Record 20 is
	// scanned for minute 5; the binary search for minute 35 does not read it.
	file := s.indexFile(ref)
	b, _ := os.ReadFile(file)
	b[idxHeader+20*idxRecSize+5] ^= 0x40
	os.WriteFile(file, b, 0o644)
	if _, ok := fresh().atFromFile(ref, t0.Add(5*time.Minute).Unix()); ok {
		t.Error("atFromFile answered from a damaged file")
	}
	if h, ok := fresh().atFromFile(ref, t0.Add(35*time.Minute+30*time.Second).Unix()); !ok || h != want[36] {
		t.Errorf("minute 35 past a damaged record it does not read: %s, %v; want %s", h, ok, want[36])
	}
	if got, _ := fresh().At(ref, t0.Add(5*time.Minute+30*time.Second)); got != want[6] {
		t.Errorf("At after damage = %s, want %s", got, want[6])
	}
	// A damaged last record: nothing is answered from the file.
	b, _ = os.ReadFile(file)
	b[len(b)-idxRecSize+9] ^= 0x01
	os.WriteFile(file, b, 0o644)
	if _, ok := fresh().atFromFile(ref, t0.Add(35*time.Minute).Unix()); ok {
		t.Error("atFromFile answered past a damaged last record")
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

// TestAtFromFileRandomTimes: on chains whose commit times jump back and
// forth at random, the file's answer (binary search after the last
// inversion, scan before it) is the loaded index's for every minute.
func TestAtFromFileRandomTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 23))
	for round := 0; round < 6; round++ {
		back := 2 + round*3 // one commit in `back` has its clock set back
		r := newTestRepo(t, "plain")
		s, err := Open(r.open)
		if err != nil {
			t.Fatal(err)
		}
		m := 0
		for i := 0; i < 60; i++ {
			switch {
			case rng.IntN(back) == 0:
				m -= rng.IntN(20) // a clock set back
			case rng.IntN(3) > 0:
				m += rng.IntN(3)
			}
			mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(m)*time.Minute)))
		}
		ref := s.StateRef()
		s.Close()
		loaded, err := Open(r.open) // answers from the index loaded in memory
		if err != nil {
			t.Fatal(err)
		}
		loaded.mu.Lock()
		_, err = loaded.index(ref)
		loaded.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := Open(r.open) // answers from the file (atFromFile never loads it)
		if err != nil {
			t.Fatal(err)
		}
		for q := -80; q < 130; q++ {
			ts := t0.Add(time.Duration(q)*time.Minute + 30*time.Second)
			want, _ := loaded.At(ref, ts)
			got, ok := fresh.atFromFile(ref, ts.Unix())
			if want == "" && ok {
				t.Fatalf("round %d minute %d: atFromFile = %s before the first commit", round, q, got)
			}
			if want != "" && (!ok || got != want) {
				t.Fatalf("round %d minute %d: atFromFile = %s, %v; the loaded index says %s", round, q, got, ok, want)
			}
		}
		loaded.Close()
		fresh.Close()
	}
}
