package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// OpenDir's judge sees where the folder really is and its refusal leaves
// nothing open; the steps through a Dir land in the folder opened, even
// once its name is a symbolic link elsewhere.
func TestOpenDirJudgedStepsStayInTheFolderOpened(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(base, "in"), filepath.Join(base, "out")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if _, err := OpenDir(link, func(_, real string) error {
		if real != out {
			t.Errorf("judged %s, want %s", real, out)
		}
		return refused
	}); err != refused {
		t.Fatalf("OpenDir through a refused link: %v", err)
	}
	d, err := OpenDir(in, func(_, real string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(in, in+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, in); err != nil {
		t.Fatal(err)
	}
	if err := d.Mkdir("f.lock", 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := d.WriteTemp("f", []byte("new"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.RenameNew(tmp, "f"); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove("f.lock"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(in+".real", "f")); err != nil || string(got) != "new" {
		t.Errorf("the folder opened holds %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
}
