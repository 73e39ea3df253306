package syncer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A kept file that is a symbolic link here is met twice by a sync, by the
// scan for unrecorded edits and by the write of the merged version, and
// refused in the same words: the report names it once.
func TestSyncNamesALinkOnce(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	const p = ".claude/x.json"
	a.write(p, `{"n": 1}`+"\n")
	a.record()
	a.sync()
	b.sync()
	name := b.eng.Config().Abs(p)
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "outside.json"), name); err != nil {
		t.Fatal(err)
	}
	a.write(p, `{"n": 2}`+"\n")
	a.record()
	a.sync()
	rep, err := Sync(context.Background(), b.eng, Options{Cwd: b.dir})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pr := range rep.Problems {
		if pr.Path == p {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%s named %d times in %v, want once", p, n, rep.Problems)
	}
}

// A sync that retries (the remote moved between its fetch and its push)
// still names the local versions its first merge did not take: that merge
// is in the state ref the second one builds on, so the loss is as real.
func TestSyncRetryKeepsFirstMergesLosses(t *testing.T) {
	w, a, b := syncedPair(t)
	a.write(wsPath, ws("a-plan"))
	a.record()
	b.now = a.now.Add(time.Minute) // b's edit is later and wins
	b.write(wsPath, ws("b-plan"))
	b.record()
	b.sync()
	beforePush = func(attempt int) {
		if attempt == 0 {
			beforePush = nil
			b.write(initPath, initiative("created"))
			b.record()
			b.sync() // the remote moves: a's push fails and a merges again
		}
	}
	defer func() { beforePush = nil }()
	rep := a.sync()
	if !rep.Retried || !rep.Pushed {
		t.Fatalf("retried=%v pushed=%v, want a retry that pushed", rep.Retried, rep.Pushed)
	}
	if len(rep.Lost) != 1 || rep.Lost[0].Path != wsPath {
		t.Errorf("lost = %+v, want a's %s named", rep.Lost, wsPath)
	}
	b.sync()
	w.holdEverywhere(map[string]string{wsPath: ws("b-plan"), initPath: initiative("created")})
}
