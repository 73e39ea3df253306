package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.json")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil || string(data) != "new" {
		t.Fatalf("read %q, %v", data, err)
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %v, want a.json only", ents)
	}
}

func TestWriteTempIsNamedWithPrefix(t *testing.T) {
	dir := t.TempDir()
	tmp, err := WriteTemp(filepath.Join(dir, "a.json"), []byte("x"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(tmp) != dir || !strings.HasPrefix(filepath.Base(tmp), Prefix+"a.json-") || !IsTemp(tmp) {
		t.Errorf("temp %s: want %s/%sa.json-*", tmp, dir, Prefix)
	}
}

func TestWriteIntoMissingDirFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "a.json"), nil, 0o644); err == nil {
		t.Error("wrote into a directory that does not exist")
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".strata-tmp-a.json-123":       true,
		".claude/.strata-tmp-a.json-1": true,
		"/r/.claude/.strata-tmp-x":     true,
		".claude/a.json":               false,
		".strata-tmp/a.json":           false,
		"a.strata-tmp-":                false,
		".claude/.a.json.strata-12345": false,
		".claude/.a.json.tmp.12345":    false,
	} {
		if got := IsTemp(name); got != want {
			t.Errorf("IsTemp(%q) = %v, want %v", name, got, want)
		}
	}
}
