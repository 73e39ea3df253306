package gitstore

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// TestBlobSizeBeforeReading learns blob sizes from headers, loose and then
// packed with deltas, and refuses a blob over the limit with an error that
// names its size, read by id or by path.
func TestBlobSizeBeforeReading(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := strings.Repeat(`{"line":"repeated state content"}`+"\n", 300)
	for i := 0; i < 20; i++ {
		mustRecord(t, s, change("d/state.json", body+itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))
	}
	files, err := s.Files(s.StateRef())
	if err != nil {
		t.Fatal(err)
	}
	blob := files["d/state.json"]
	want := int64(len(body) + len("19"))
	head, _ := s.Head(s.StateRef())
	for _, stage := range []string{"loose", "packed"} {
		if stage == "packed" {
			runGit(t, r.main, "gc", "-q", "--prune=now")
		}
		if n, err := s.BlobSize(blob); err != nil || n != want {
			t.Fatalf("%s: BlobSize = %d, %v; want %d", stage, n, err, want)
		}
		_, err := s.ReadBlobLimit(blob, want-1)
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Size != want || !strings.Contains(err.Error(), itoa(want)) {
			t.Fatalf("%s: over the limit: %v", stage, err)
		}
		data, err := s.ReadBlobLimit(blob, want)
		if err != nil || !bytes.Equal(data, []byte(body+"19")) {
			t.Fatalf("%s: at the limit: %v", stage, err)
		}
		_, err = s.ReadFile(head, "d/state.json", want-1)
		if !errors.As(err, &tl) || tl.Size != want || !errors.Is(err, state.ErrTooLarge) {
			t.Fatalf("%s: ReadFile over the limit: %v", stage, err)
		}
		if data, err := s.ReadFile(head, "d/state.json", want); err != nil || !bytes.Equal(data, []byte(body+"19")) {
			t.Fatalf("%s: ReadFile at the limit: %v", stage, err)
		}
		if data, size, err := s.ReadBlob(blob, want-1); data != nil || size != want || err != nil {
			t.Fatalf("%s: ReadBlob over the limit: %d bytes, size %d, %v", stage, len(data), size, err)
		}
		if _, err := s.BlobSize(head); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("%s: a commit as a blob: %v", stage, err)
		}
		if _, err := s.ReadBlobLimit(strings.Repeat("ab", 20), 100); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("%s: a missing blob: %v", stage, err)
		}
	}
	if _, err := s.BlobSize("nothex"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a bad id: %v", err)
	}
}

// WriteBlob stores a blob that HasBlob then finds, with the id BlobHash
// gives; HasBlob finds a recorded blob loose and packed, and no commit, no
// missing blob and no bad id.
func TestWriteBlobHasBlob(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	content := []byte(`{"never":"recorded"}`)
	if s.HasBlob(BlobHash(content)) {
		t.Fatal("a blob never written is there")
	}
	id, err := s.WriteBlob(content)
	if err != nil || id != BlobHash(content) {
		t.Fatalf("WriteBlob = %s, %v; want %s", id, err, BlobHash(content))
	}
	if !s.HasBlob(id) {
		t.Fatal("the blob written is not there")
	}
	mustRecord(t, s, change("d/state.json", `{"v":1}`, t0))
	files, err := s.Files(s.StateRef())
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.Head(s.StateRef())
	for _, stage := range []string{"loose", "packed"} {
		if stage == "packed" {
			runGit(t, r.main, "gc", "-q")
		}
		if !s.HasBlob(files["d/state.json"]) {
			t.Fatalf("%s: a recorded blob is not there", stage)
		}
		if s.HasBlob(head) || s.HasBlob(strings.Repeat("ab", 20)) || s.HasBlob("nothex") {
			t.Fatalf("%s: a commit, a missing blob or a bad id taken for a blob", stage)
		}
	}
}
