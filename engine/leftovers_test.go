package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
)

// A restore killed between writing its temp files and renaming them left
// them beside the files it restored; the next restore removes them (those
// of processes no longer running only), where before they stayed for good.
func TestRestoreRemovesLeftoverTempFiles(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, `{"v": 1}`)
	record(t, e, k.Path)
	first := mustHead(t, e)
	edit(t, e, k.Path, `{"v": 2}`)
	record(t, e, k.Path)

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1) to get a finished process's id")
	}
	dir := filepath.Dir(e.Config().Abs(k.Path))
	left := filepath.Join(dir, fmt.Sprintf("%sa.json-%d-123456", atomicfile.Prefix, dead.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf("%sa.json-%d-654321", atomicfile.Prefix, os.Getpid()))
	for _, n := range []string{left, live} {
		if err := os.WriteFile(n, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Restore([]config.Kept{k}, Point{Rev: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed restore's temp file is still there: %v", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("a running process's temp file was removed: %v", err)
	}
	if got := onDisk(t, e, k.Path); got != `{"v": 1}` {
		t.Errorf("restored %q", got)
	}
}
