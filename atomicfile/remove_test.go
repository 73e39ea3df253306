package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// RemoveUnchanged removes the checked file, and never an agent's save that
// landed after the check: that one stays at the name (attack18-travel 2's
// race, for the removal a restore --all makes; before, the removal read
// and checked the file, then removed whatever was at the name).
func TestRemoveUnchanged(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "state.json")
	write := func(b string) fs.FileInfo {
		tmp := name + ".agent"
		if err := os.WriteFile(tmp, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, name); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	same := func(st fs.FileInfo) func(fs.FileInfo) bool {
		return func(now fs.FileInfo) bool { return SameFile(st, now) && st.Size() == now.Size() }
	}

	checked := write("v1")
	if removed, err := RemoveUnchanged(name, same(checked)); err != nil || !removed {
		t.Fatalf("the checked file: removed %v, %v", removed, err)
	}
	if _, err := os.Lstat(name); !os.IsNotExist(err) {
		t.Fatalf("still there: %v", err)
	}

	checked = write("v1")
	write("the agent's save, after the check")
	removed, err := RemoveUnchanged(name, same(checked))
	if err != nil || removed {
		t.Fatalf("a save after the check: removed %v, %v", removed, err)
	}
	if b, _ := os.ReadFile(name); string(b) != "the agent's save, after the check" {
		t.Fatalf("the save is not at its name: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("files left beside it: %v", ents)
	}
	if removed, err := RemoveUnchanged(filepath.Join(dir, "gone.json"), same(checked)); err != nil || !removed {
		t.Fatalf("a missing file: %v, %v", removed, err)
	}
}
