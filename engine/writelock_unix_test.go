//go:build unix

package engine

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// writesLocked reports whether another descriptor holds the writes lock.
func writesLocked(t *testing.T, e *Engine) bool {
	t.Helper()
	name := filepath.Join(e.store.CommonDir(), "strata", "writes.lock")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return false
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatal(err)
	}
	return true
}

// Two strata processes writing one file each compare it with the version
// they expect and then rename theirs over it: without a lock around both
// steps, both can find the old version and the second rename drops the
// first's write (two concurrent memory adds, each reporting "added"). A
// single write (Put) and a batch of checkouts (a sync, a restore) hold the
// writes lock from the last check to the rename.
func TestWritesHoldTheLockFromCheckToRename(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/a.json"
	k := kept(t, e, path)
	edit(t, e, path, "{}\n")
	held := false
	onStep(t, "added "+path, func() { held = writesLocked(t, e) })
	if _, err := e.Put(k, gitstore.BlobHash([]byte("{}\n")), []byte(`{"v": 1}`+"\n"), state.SourceRecord); err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Error("Put: the writes lock is free between the check and the rename")
	}
	if writesLocked(t, e) {
		t.Error("Put: the writes lock is still held")
	}

	c := e.Checkouts()
	defer c.Abort()
	for _, p := range []string{".claude/b.json", ".claude/c.json"} {
		if _, err := c.Add(kept(t, e, p), "", gitstore.BlobHash([]byte("{}\n")), []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	held = false
	if _, err := c.Commit(func() { held = writesLocked(t, e) }); err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Error("Checkouts.Commit: the writes lock is free while files are put in place")
	}
	if writesLocked(t, e) {
		t.Error("Checkouts.Commit: the writes lock is still held")
	}
}
