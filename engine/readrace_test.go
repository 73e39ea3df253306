package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/config"
)

// swapBeforeRead makes beforeRead swap the folder d of e's work tree for a
// symbolic link to target, once, between Read's checks and its read: what
// a racing local process does (attack25 K1).
func swapBeforeRead(t *testing.T, e *Engine, d, target string) {
	t.Helper()
	root := e.Config().Root
	done := false
	beforeRead = func(config.Kept) {
		if done {
			return
		}
		done = true
		if err := os.Rename(filepath.Join(root, d), filepath.Join(root, d+".real")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(target, filepath.Join(root, d)); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { beforeRead = nil })
}

func TestRecordNeverReadsThroughAFolderSwappedOutOfTheTree(t *testing.T) {
	e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"d/*\", schema: json}\n", "d/config.json")
	edit(t, e, "d/config.json", `{"a":0}`)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "config.json"), []byte(`{"auths":"SECRETMARKER"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	swapBeforeRead(t, e, "d", outside)
	outs := record(t, e, "d/config.json")
	if len(outs) != 1 || outs[0].Entry != nil {
		t.Fatalf("outcome %+v, want nothing recorded", outs)
	}
	if got := outs[0].Problems.Error(); !strings.Contains(got, "its directory is a symbolic link out of the repository; not followed") {
		t.Errorf("problems %q", got)
	}
	out, err := exec.Command("git", "-C", e.Config().Root, "log", "-p", "--all").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v: %s", err, out)
	}
	if strings.Contains(string(out), "SECRETMARKER") {
		t.Fatalf("the outside file was recorded:\n%s", out)
	}
}

func TestReadFollowsAFolderSwappedForALinkInsideTheTree(t *testing.T) {
	e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"d/*\", schema: json}\n", "d/config.json")
	edit(t, e, "d/config.json", `{"a":0}`)
	edit(t, e, "other/config.json", `{"a":1}`)
	swapBeforeRead(t, e, "d", filepath.Join(e.Config().Root, "other"))
	f, p := e.Read(kept(t, e, "d/config.json"))
	if p != nil || string(f.Content) != `{"a":1}` {
		t.Fatalf("read %q, %v; want the in-tree folder's file", f.Content, p)
	}
}

func TestReadRefusesAFolderSwappedForALinkIntoGit(t *testing.T) {
	e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"d/*\"}\n", "d/config")
	edit(t, e, "d/config", "x\n")
	swapBeforeRead(t, e, "d", ".git")
	f, p := e.Read(kept(t, e, "d/config"))
	if p == nil || f.Exists || !strings.Contains(p.Message, ".git directory") {
		t.Fatalf("read %q, %v; want the .git refusal", f.Content, p)
	}
}

// The work tree's root is opened once for a command's reads (heldDir), and
// again after Forget or Release (each watcher batch, each sync round): a
// work tree moved away and another put at its name is then read there,
// never through the old folder's descriptor for the watcher's whole run.
func TestReadOpensTheRootAgainAfterRelease(t *testing.T) {
	for name, release := range map[string]func(*Engine){"Release": (*Engine).Release, "Forget": (*Engine).Forget} {
		t.Run(name, func(t *testing.T) {
			e := withOwnFiles(t, newRepo(t), "files:\n  - {glob: \"d/*\", schema: json}\n", "d/config.json")
			edit(t, e, "d/config.json", `{"a":0}`)
			k := kept(t, e, "d/config.json")
			if f, p := e.Read(k); p != nil || string(f.Content) != `{"a":0}` {
				t.Fatalf("read %q, %v", f.Content, p)
			}
			root := e.Config().Root
			if err := os.Rename(root, root+".moved"); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-a", root+".moved", root).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			edit(t, e, "d/config.json", `{"a":1}`)
			release(e)
			if f, p := e.Read(k); p != nil || string(f.Content) != `{"a":1}` {
				t.Fatalf("read %q, %v; want the file at the work tree's name now", f.Content, p)
			}
		})
	}
}
