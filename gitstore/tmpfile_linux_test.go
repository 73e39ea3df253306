//go:build linux

package gitstore

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// TestPortableWritePath runs Record and the lock protocol on the path used
// where O_TMPFILE is not available.
func TestPortableWritePath(t *testing.T) {
	was := odb.UseTmpfile(false)
	defer odb.UseTmpfile(was)
	r := newTestRepo(t, "worktree")
	snap := r.snapshot(t)
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		mustRecord(t, s, change("a/b.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))
		runGit(t, r.main, "pack-refs", "--all")
	}
	old := LockTimeout
	LockTimeout = 100 * time.Millisecond
	defer func() { LockTimeout = old }()
	writeFile(t, filepath.Join(r.common, filepath.FromSlash(s.StateRef())+".lock"), "")
	if _, err := s.Record(change("a/b.json", "x", t0)); !errors.Is(err, state.ErrLocked) {
		t.Fatalf("held lock: %v", err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(r.common, "objects", "??", "tmp_obj_*")); len(tmp) != 0 {
		t.Fatalf("temporary objects left: %v", tmp)
	}
	r.checkInvariants(t, snap)
}
