package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Checkouts writes every version at Commit, keeps each file's mode, leaves
// no temp file, and does not replace a file edited between Add and Commit
// (returned as late) nor one that was not the expected version at Add.
func TestCheckoutsBatch(t *testing.T) {
	e := newRepo(t)
	paths := []string{".claude/a.json", ".claude/b.json", ".claude/c.json", ".claude/e.json"}
	for _, p := range paths {
		edit(t, e, p, `{"v": 1}`)
	}
	record(t, e, paths...)
	old, _ := e.store.Files(mustHead(t, e))
	if err := os.Chmod(e.Config().Abs(paths[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		edit(t, e, p, `{"v": 2, "p": "`+p+`"}`)
	}
	if err := os.Chmod(e.Config().Abs(paths[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	record(t, e, paths...)
	v2, _ := e.store.Files(mustHead(t, e))
	for _, p := range paths { // back to version 1 on disk, as a sync finds them
		edit(t, e, p, `{"v": 1}`)
	}
	edit(t, e, paths[1], `{"v": "mine"}`) // not the version expected: skipped at Add

	c := e.Checkouts()
	defer c.Abort()
	for i, p := range paths {
		ok, err := c.Add(kept(t, e, p), old[p], v2[p], nil)
		if err != nil || ok != (i != 1) {
			t.Fatalf("Add %s = %v, %v", p, ok, err)
		}
	}
	if got := onDisk(t, e, paths[0]); got != `{"v": 1}` {
		t.Fatalf("written before Commit: %q", got)
	}
	time.Sleep(10 * time.Millisecond)
	edit(t, e, paths[2], `{"v": "edited meanwhile"}`)
	late, err := c.Commit(nil)
	if err != nil || len(late) != 1 || late[0] != paths[2] {
		t.Fatalf("Commit = %v, %v; want %s late", late, err, paths[2])
	}
	want := map[string]string{paths[0]: `{"v": 2, "p": ".claude/a.json"}`, paths[1]: `{"v": "mine"}`,
		paths[2]: `{"v": "edited meanwhile"}`, paths[3]: `{"v": 2, "p": ".claude/e.json"}`}
	for p, w := range want {
		if got := onDisk(t, e, p); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
	if st, _ := os.Stat(e.Config().Abs(paths[0])); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	for _, dir := range []string{".claude"} {
		ents, _ := os.ReadDir(filepath.Join(e.Config().Root, dir))
		for _, d := range ents {
			if strings.HasPrefix(d.Name(), ".strata-tmp-") {
				t.Errorf("left behind %s/%s", dir, d.Name())
			}
		}
	}
}

// Add writes content a caller already read only when it is the blob's own:
// content that does not hash to the blob is set aside and the blob is read.
// The directories, removed since the record, are made again.
func TestCheckoutsAddContent(t *testing.T) {
	e := newRepo(t)
	yaml := "files:\n  - glob: \".claude/sub/*.json\"\n    schema: json\n"
	e = withOwnFiles(t, e, yaml, ".claude/sub/b.json", ".claude/sub/c.json")
	paths := []string{".claude/a.json", ".claude/sub/b.json", ".claude/sub/c.json"}
	for _, p := range paths {
		edit(t, e, p, `{"v": "`+p+`"}`)
	}
	record(t, e, paths...)
	files, _ := e.store.Files(mustHead(t, e))
	if err := os.RemoveAll(filepath.Join(e.Config().Root, ".claude")); err != nil {
		t.Fatal(err)
	}
	c := e.Checkouts()
	defer c.Abort()
	wrong := []byte(`{"v": "not this blob"}`)
	right := []byte(`{"v": ".claude/sub/b.json"}`)
	for _, a := range []struct {
		path string
		data []byte
	}{{paths[0], wrong}, {paths[1], right}} {
		if ok, err := c.Add(kept(t, e, a.path), "", files[a.path], a.data); !ok || err != nil {
			t.Fatalf("Add %s = %v, %v", a.path, ok, err)
		}
	}
	if ok, err := c.Add(kept(t, e, paths[2]), "", files[paths[2]], nil); !ok || err != nil {
		t.Fatalf("Add %s = %v, %v", paths[2], ok, err)
	}
	if _, err := c.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, e, paths[0]); got != `{"v": ".claude/a.json"}` {
		t.Errorf("%s = %q: content not matching its blob was written", paths[0], got)
	}
	if got := onDisk(t, e, paths[2]); got != `{"v": ".claude/sub/c.json"}` {
		t.Errorf("%s = %q", paths[2], got)
	}
}
