package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// A loose ref file that still holds no object ID once read again for a
// while is a broken ref, named so with its file, what it holds and the
// commit its reflog last names: not "ref is being written", which stays
// for a ref another writer's <ref>.lock is on, and never for a file that
// gets its ID while read again (a writer ignoring git's lock protocol,
// midway). The lock a writer holds itself is no other writer's.
func TestBrokenRefNamed(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head := mustRecord(t, s, change("f.json", "1", t0))[0].Commit
	file := filepath.Join(r.common, "refs", "strata", "state")

	broken := func(what string, want string) {
		t.Helper()
		_, err := s.Head(s.StateRef())
		var be *BrokenRefError
		if !errors.As(err, &be) || errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrLocked) {
			t.Fatalf("%s: Head = %v, want a *BrokenRefError", what, err)
		}
		if err.Error() != want {
			t.Fatalf("%s: Head =\n%v\nwant\n%s", what, err, want)
		}
	}
	fix := " not an object ID: a broken ref (git rev-parse refs/strata/state warns \"ignoring broken ref refs/strata/state\", and git update-ref cannot move it); write into it the commit it should name (its reflog's newest entry names " + head + ")"
	writeFile(t, file, "not a hash\n")
	broken("garbage", `.git/refs/strata/state holds "not a hash",`+fix)
	if _, err := s.Record(change("f.json", "2", t0)); err == nil || !strings.HasPrefix(err.Error(), ".git/refs/strata/state holds") {
		t.Fatalf("record over a broken ref: %v", err)
	}
	writeFile(t, file, "")
	broken("empty", `.git/refs/strata/state is empty,`+fix)

	// under its own lock, a writer finds the ref broken too
	lock, err := s.lockRef(s.StateRef())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.readLocked(s.StateRef())
	var be *BrokenRefError
	if !errors.As(err, &be) {
		t.Fatalf("readLocked under its own lock: %v, want a *BrokenRefError", err)
	}
	lock.release()

	// another writer's lock on it: being written, as before
	writeFile(t, file+".lock", "")
	if _, err := s.Head(s.StateRef()); err == nil || err.Error() != "read ref refs/strata/state: ref is being written" {
		t.Fatalf("broken ref under another's lock: %v, want ref is being written", err)
	}
	os.Remove(file + ".lock")

	// the branch HEAD names, through HEAD; no reflog: no commit to name
	branch := filepath.Join(r.common, "refs", "heads", "main")
	if _, err := os.Stat(branch); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(r.common, "logs", "refs", "heads", "main"))
	writeFile(t, branch, "garbage\n")
	_, err = s.Resolve("HEAD")
	if want := `.git/refs/heads/main holds "garbage", not an object ID: a broken ref (git rev-parse refs/heads/main warns "ignoring broken ref refs/heads/main", and git update-ref cannot move it); write into it the commit it should name, or remove it if the ref should not exist`; err == nil || err.Error() != want {
		t.Fatalf("Resolve(HEAD) =\n%v\nwant\n%s", err, want)
	}

	// a file that gets its ID while read again is read, never called broken
	writeFile(t, file, "")
	done := make(chan struct{})
	go func() {
		time.Sleep(30 * time.Millisecond)
		os.WriteFile(file, []byte(head+"\n"), 0o644)
		close(done)
	}()
	got, err := s.Head(s.StateRef())
	<-done
	if err != nil || got != head {
		t.Fatalf("Head of a ref written meanwhile = %s, %v; want %s", got, err, head)
	}
}
