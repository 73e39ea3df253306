package graph

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// A graph file's folder swapped for a symbolic link out of the work tree
// after the caller's checks (engine.WriteOwn) and before the read of the
// version the edit is based on (attack25 K1, the L3 graph's read-modify-
// write): read through the door, the outside file is never read, edited or
// written back; L3 is unavailable.
func TestUpsertNeverReadsThroughAFolderSwappedOutOfTheTree(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	secret := `{"type":"entity","name":"SECRETMARKER","entityType":"x","observations":[]}` + "\n"
	mine := `{"type":"entity","name":"mine","entityType":"x","observations":[]}` + "\n"
	for name, content := range map[string]string{"root/mem/memory.jsonl": mine, "out/memory.jsonl": secret} {
		name = filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := File{
		Name: filepath.Join(root, "mem", "memory.jsonl"),
		Tree: state.Tree{Root: root, Real: root},
		Rel:  "mem/memory.jsonl",
	}
	swapped := false
	beforeRead = func() {
		if swapped {
			return
		}
		swapped = true
		mem := filepath.Join(root, "mem")
		if err := os.Rename(mem, mem+".real"); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(out, mem); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { beforeRead = nil })
	changed, err := f.Upsert([]Entity{ours})
	if changed || !errors.Is(err, ErrUnavailable) || !errors.Is(err, state.ErrOutside) {
		t.Fatalf("changed %v, %v; want L3 unavailable, the folder out of the tree", changed, err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "memory.jsonl")); string(got) != secret {
		t.Errorf("the outside file was edited:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "mem.real", "memory.jsonl")); string(got) != mine {
		t.Errorf("the tree's graph file is now:\n%s", got)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if e.Name() != "memory.jsonl" || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left in the outside folder: %s", e.Name())
		}
	}
}

// The graph file's folder swapped for a symbolic link out of the work tree
// after update judged it, and back, at each of its writes (attack25-recheck
// N6): the lock folder, the temp file and the exchange are made in the
// folder judged, never through the link; the outside folder gets no byte
// and no lock folder.
func TestUpsertNeverWritesThroughAFolderSwappedOutOfTheTree(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	secret := `{"type":"entity","name":"SECRETMARKER","entityType":"x","observations":[]}` + "\n"
	mine := `{"type":"entity","name":"mine","entityType":"x","observations":[]}` + "\n"
	for name, content := range map[string]string{"root/mem/memory.jsonl": mine, "out/memory.jsonl": secret} {
		name = filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := File{
		Name: filepath.Join(root, "mem", "memory.jsonl"),
		Tree: state.Tree{Root: root, Real: root},
		Rel:  "mem/memory.jsonl",
	}
	mem := filepath.Join(root, "mem")
	swapped := false
	swap := func(toOut bool) {
		if swapped == toOut {
			return
		}
		swapped = toOut
		if toOut {
			if err := os.Rename(mem, mem+".real"); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(out, mem); err != nil {
				t.Error(err)
			}
			return
		}
		if err := os.Remove(mem); err != nil {
			t.Error(err)
		}
		if err := os.Rename(mem+".real", mem); err != nil {
			t.Error(err)
		}
	}
	// out for each write, back for each read (so that the reads, through
	// the door, find the tree's file and go on), back at the end
	writeStep = func(step string) {
		switch step {
		case "lock", "temp", "replace":
			swap(true)
		default:
			swap(false)
		}
	}
	t.Cleanup(func() { writeStep = nil })
	_, _ = f.Upsert([]Entity{ours})
	swap(false)
	if got, _ := os.ReadFile(filepath.Join(out, "memory.jsonl")); string(got) != secret {
		t.Errorf("the outside file was edited:\n%s", got)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if e.Name() != "memory.jsonl" {
			t.Errorf("left in the outside folder: %s", e.Name())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(mem, "memory.jsonl")); !strings.Contains(string(got), `"mine"`) {
		t.Errorf("the tree's graph file is now:\n%s", got)
	}
}
