package syncer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
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
