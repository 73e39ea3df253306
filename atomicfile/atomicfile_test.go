package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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

// longNames are base names up to NAME_MAX (255 bytes), which a temp file
// named with the whole name (plus Prefix and a suffix) exceeded.
var longNames = []string{
	strings.Repeat("n", 245) + ".json",       // 250 bytes
	strings.Repeat("m", 250) + ".json",       // 255
	strings.Repeat("é", 125) + ".json",       // 255, cut between whole characters
	strings.Repeat("a", tempNameMax) + ".md", // just over the limit
}

// Every name that can exist can be written: by Write, and by a Batch
// replacing it (checked, swapped where it can be) or creating it through a
// named temp file; the temp files are strata's (IsTemp), carry the process
// id where Leftovers looks for it, and differ for names that differ only
// past the cut.
func TestLongNamesWritten(t *testing.T) {
	namedOnly(t) // AddNew's temp files too
	dir, fresh := t.TempDir(), t.TempDir()
	for _, base := range longNames {
		name := filepath.Join(dir, base)
		if err := Write(name, []byte("one"), 0o644); err != nil {
			t.Fatal(err)
		}
		var b Batch
		b.Unchanged = func(string, os.FileInfo) bool { return true }
		if err := b.Add(name, []byte("two"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.AddNew(filepath.Join(fresh, base), []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range b.pend {
			if len(p.tmp) > 255 || !IsTemp(p.tmp) {
				t.Fatalf("temp name %q (%d bytes)", p.tmp, len(p.tmp))
			}
			if f := strings.Split(p.tmp, "-"); f[len(f)-2] != strconv.Itoa(os.Getpid()) {
				t.Fatalf("temp name %q: no pid where Leftovers reads it", p.tmp)
			}
		}
		if notWritten, err := b.Commit(nil); err != nil || len(notWritten) > 0 {
			t.Fatal(notWritten, err)
		}
		if data, _ := os.ReadFile(name); string(data) != "two" {
			t.Fatalf("%d bytes: %q", len(base), data)
		}
		if data, _ := os.ReadFile(filepath.Join(fresh, base)); string(data) != "new" {
			t.Fatalf("%d bytes, new: %q", len(base), data)
		}
	}
	a, b := tempBase(strings.Repeat("x", 200)+"a"), tempBase(strings.Repeat("x", 200)+"b")
	if a == b || len(a) > tempNameMax || !utf8.ValidString(tempBase(longNames[2])) {
		t.Fatalf("tempBase: %q, %q, %q", a, b, tempBase(longNames[2]))
	}
	for _, d := range []string{dir, fresh} {
		if ents, _ := os.ReadDir(d); len(ents) != len(longNames) {
			t.Fatalf("%s holds %d entries, want %d (no temp left)", d, len(ents), len(longNames))
		}
	}
}

// umask is this process's umask, as /proc/self/status gives it (read
// again: Umask keeps what it read first).
func umask(t *testing.T) fs.FileMode {
	t.Helper()
	m, err := umaskOf()
	if errors.Is(err, errNoUmask) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// With Default a new file gets 0666 less the umask and a file replaced
// keeps its mode; any other mode is the file's exactly (attack36 finding 2).
func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "page.html")
	modeOf := func() fs.FileMode {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	if err := Write(name, []byte("new"), Default); err != nil {
		t.Fatal(err)
	}
	if got, want := modeOf(), 0o666&^umask(t); got != want {
		t.Fatalf("new file: mode %v, want %v", got, want)
	}
	for _, keep := range []fs.FileMode{0o600, 0o666, 0o640} {
		if err := os.Chmod(name, keep); err != nil {
			t.Fatal(err)
		}
		if err := Write(name, []byte("again"), Default); err != nil {
			t.Fatal(err)
		}
		if got := modeOf(); got != keep {
			t.Fatalf("replaced %v file: mode %v", keep, got)
		}
	}
	if err := Write(name, []byte("exact"), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := modeOf(); got != 0o640 {
		t.Fatalf("exact mode: %v, want 0640", got)
	}
	other := filepath.Join(dir, "new.json")
	var b Batch
	if err := b.AddNew(other, []byte("{}"), Default); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(other); st.Mode().Perm() != 0o666&^umask(t) {
		t.Fatalf("batch's new file: mode %v", st.Mode().Perm())
	}
}
