package gitstore

import (
	"encoding/binary"
	"os"
	"reflect"
	"testing"
	"time"
)

// history records n versions of f.json, one a minute from t0.
func history(t *testing.T, s *Store, n int) []string {
	t.Helper()
	var commits []string
	for i := 0; i < n; i++ {
		commits = append(commits, mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Minute)))[0].Commit)
	}
	return commits
}

// answers collects At for every minute and the full Log.
func answers(t *testing.T, s *Store, n int) ([]string, int) {
	t.Helper()
	var at []string
	for i := 0; i < n; i++ {
		h, err := s.At(s.StateRef(), t0.Add(time.Duration(i)*time.Minute+30*time.Second))
		if err != nil {
			t.Fatalf("At %d: %v", i, err)
		}
		at = append(at, h)
	}
	log, err := s.Log(s.StateRef(), LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return at, len(log)
}

func TestIndexIsADisposableCache(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	commits := history(t, s, 40)
	at, n := answers(t, s, 40)
	if !reflect.DeepEqual(at, commits) || n != 40 {
		t.Fatalf("At answers differ from the recorded commits")
	}
	file := s.indexFile(s.StateRef())
	if fi, err := os.Stat(file); err != nil || fi.Size() != idxHeader+40*idxRecSize {
		t.Fatalf("index file: %v, %v", fi, err)
	}
	check := func(name string) {
		t.Helper()
		s2, err := Open(r.open) // a fresh process's view
		if err != nil {
			t.Fatal(err)
		}
		at2, n2 := answers(t, s2, 40)
		if !reflect.DeepEqual(at2, commits) || n2 != 40 {
			t.Fatalf("%s: answers changed", name)
		}
	}

	os.Remove(file)
	check("deleted")

	os.WriteFile(file, []byte("garbage"), 0o644)
	check("garbage")

	// A torn final record, as a crash mid-append leaves.
	b, _ := os.ReadFile(file)
	os.WriteFile(file, b[:len(b)-7], 0o644)
	check("torn")

	// A flipped bit: the record's checksum no longer matches.
	b, _ = os.ReadFile(file)
	b[idxHeader+20*idxRecSize+7] ^= 0x55
	os.WriteFile(file, b, 0o644)
	check("bit flip")

	// A well-formed record whose time lies: At checks the commit it lands
	// on, notices and rebuilds.
	b, _ = os.ReadFile(file)
	rec := b[idxHeader+20*idxRecSize : idxHeader+21*idxRecSize]
	binary.BigEndian.PutUint64(rec, uint64(t0.Add(20*time.Minute+10*time.Second).Unix()))
	binary.BigEndian.PutUint32(rec[36:], recCRC(rec))
	os.WriteFile(file, b, 0o644)
	check("wrong time")
	fsck(t, r.wt)
}

func TestIndexFollowsResets(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	commits := history(t, s, 80)
	answers(t, s, 80)
	// Reset the ref back 4 commits with git: the walk back from the new head
	// never meets the last indexed commit, so after 64 steps it looks the
	// walked commits up among all indexed ones.
	runGit(t, r.wt, "update-ref", s.StateRef(), commits[75])
	if h, _ := s.At(s.StateRef(), t0.Add(79*time.Minute)); h != commits[75] {
		t.Fatalf("At after reset = %s, want %s", h, commits[75])
	}
	if fi, _ := os.Stat(s.indexFile(s.StateRef())); fi.Size() != idxHeader+76*idxRecSize {
		t.Fatalf("index after reset holds %d bytes, want 76 records", fi.Size())
	}
	// Reset further back, past the start of a 64-commit walk: a rebuild.
	runGit(t, r.wt, "update-ref", s.StateRef(), commits[19])
	if h, _ := s.At(s.StateRef(), t0.Add(79*time.Minute)); h != commits[19] {
		t.Fatalf("At after reset = %s, want %s", h, commits[19])
	}
	markTaken(t, s)
	next := mustRecord(t, s, change("f.json", "new", t0.Add(200*time.Minute)))[0].Commit
	if h, _ := s.At(s.StateRef(), t0.Add(300*time.Minute)); h != next {
		t.Fatalf("At after record on reset = %s", h)
	}
	if h, _ := s.At(s.StateRef(), t0.Add(150*time.Minute)); h != commits[19] {
		t.Fatalf("At between = %s, want %s", h, commits[19])
	}
	log, _ := s.Log(s.StateRef(), LogQuery{})
	if len(log) != 21 {
		t.Fatalf("log after reset has %d entries, want 21", len(log))
	}
	// Another Store (another process) appending to the same file.
	s2, _ := Open(r.open)
	mustRecord(t, s2, change("f.json", "s2", t0.Add(201*time.Minute)))
	if log, _ := s2.Log(s2.StateRef(), LogQuery{}); len(log) != 22 {
		t.Fatalf("s2 log %d", len(log))
	}
	mustRecord(t, s, change("f.json", "s1", t0.Add(202*time.Minute)))
	for _, st := range []*Store{s, s2} {
		if log, _ := st.Log(st.StateRef(), LogQuery{}); len(log) != 23 {
			t.Fatalf("log %d, want 23", len(log))
		}
	}
	s3, _ := Open(r.open)
	if log, _ := s3.Log(s3.StateRef(), LogQuery{}); len(log) != 23 {
		t.Fatalf("fresh log %d, want 23", len(log))
	}
	if fi, _ := os.Stat(s.indexFile(s.StateRef())); fi.Size() != idxHeader+23*idxRecSize {
		t.Fatalf("index file holds %d bytes, want %d records", fi.Size(), 23)
	}
}

// TestRecordChecksumsAgree checks At's byte-wise CRC-32C against the
// library's that writes and loads index files: every record encodeRecs
// writes passes both, and any one changed byte fails both.
func TestRecordChecksumsAgree(t *testing.T) {
	var recs []idxRec
	for i := range 300 {
		r := idxRec{time: int64(i) * 7919, bloom: uint64(i) * 0x9e3779b97f4a7c15, inv: uint32(i % 5)}
		for j := range r.hash {
			r.hash[j] = byte(i*31 + j)
		}
		recs = append(recs, r)
	}
	b := encodeRecs(recs)
	for i := range recs {
		r := b[i*idxRecSize : (i+1)*idxRecSize]
		if !recOK(r) || !recOKOne(r) {
			t.Fatalf("record %d: recOK %v, recOKOne %v", i, recOK(r), recOKOne(r))
		}
		for j := range idxRecSize {
			r[j] ^= 1 << (j % 8)
			if recOK(r) || recOKOne(r) {
				t.Fatalf("record %d with byte %d changed passes: recOK %v, recOKOne %v", i, j, recOK(r), recOKOne(r))
			}
			r[j] ^= 1 << (j % 8)
		}
	}
}
