package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteUnsyncedReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "note.json")
	for _, content := range []string{"one", "two"} {
		if err := WriteUnsynced(name, []byte(content), func(f *os.File) error { return f.Chmod(0o600) }); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries, want only note.json", len(ents))
	}
	if err := WriteUnsynced(filepath.Join(dir, "missing", "x"), []byte("x"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
