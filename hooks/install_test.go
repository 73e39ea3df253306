package hooks

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	git(tb, dir, "init", "-q", "-b", "main", ".")
	return dir
}

func TestInstallChainsASymlinkAndRestoresIt(t *testing.T) {
	root := newRepo(t)
	hook := filepath.Join(root, ".git", "hooks", HookName)
	if err := os.Symlink("../../tools/check.sh", hook); err != nil {
		t.Fatal(err)
	}
	res, err := InstallHook(root, "/opt/strata", HookName)
	if err != nil || !res.Changed || res.Chained != hook+ChainedSuffix {
		t.Fatalf("install: %+v %v", res, err)
	}
	if target, err := os.Readlink(hook + ChainedSuffix); err != nil || target != "../../tools/check.sh" {
		t.Fatalf("chained hook: %q %v", target, err)
	}
	if st, err := os.Lstat(hook); err != nil || st.Mode().Perm() != 0o755 || !st.Mode().IsRegular() {
		t.Fatalf("installed hook: %v %v", st.Mode(), err)
	}
	if _, err := UninstallHook(root, HookName); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(hook); err != nil || target != "../../tools/check.sh" {
		t.Fatalf("restored hook: %q %v", target, err)
	}
}

func TestInstallRewritesItsOwnHook(t *testing.T) {
	root := newRepo(t)
	hook := filepath.Join(root, ".git", "hooks", HookName)
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallHook(root, "/old/strata", HookName); err != nil {
		t.Fatal(err)
	}
	// another binary: rewritten in place, the chained hook untouched
	res, err := InstallHook(root, "/new/it's/strata", HookName)
	if err != nil || !res.Changed {
		t.Fatalf("reinstall: %+v %v", res, err)
	}
	data, _ := os.ReadFile(hook)
	if !bytes.Contains(data, []byte(`strata='/new/it'\''s/strata'`)) {
		t.Fatalf("hook does not name the new binary:\n%s", data)
	}
	if chained, _ := os.ReadFile(hook + ChainedSuffix); string(chained) != "#!/bin/sh\nexit 0\n" {
		t.Fatalf("chained hook changed: %q", chained)
	}
	// lost its executable bit: rewritten
	if err := os.Chmod(hook, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := InstallHook(root, "/new/it's/strata", HookName); err != nil || !res.Changed {
		t.Fatalf("non-executable hook not fixed: %+v %v", res, err)
	}
	if res, err := InstallHook(root, "/new/it's/strata", HookName); err != nil || res.Changed {
		t.Fatalf("not idempotent: %+v %v", res, err)
	}
}

func TestInstallRefusesASecondChain(t *testing.T) {
	root := newRepo(t)
	hook := filepath.Join(root, ".git", "hooks", HookName)
	os.WriteFile(hook, []byte("#!/bin/sh\necho mine\n"), 0o755)
	os.WriteFile(hook+ChainedSuffix, []byte("#!/bin/sh\necho older\n"), 0o755)
	if _, err := InstallHook(root, "/opt/strata", HookName); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("got %v", err)
	}
	if data, _ := os.ReadFile(hook); string(data) != "#!/bin/sh\necho mine\n" {
		t.Fatalf("hook changed: %q", data)
	}
	// a foreign hook is not ours to uninstall
	if res, err := UninstallHook(root, HookName); err != nil || res.Changed {
		t.Fatalf("uninstall of a foreign hook: %+v %v", res, err)
	}
}

func TestDirLinkedWorktree(t *testing.T) {
	root := newRepo(t)
	git(t, root, "commit", "-q", "--allow-empty", "-m", "x")
	wt := filepath.Join(filepath.Dir(root), filepath.Base(root)+"-linked")
	git(t, root, "worktree", "add", "-q", wt)
	t.Cleanup(func() { os.RemoveAll(wt) })
	dir, err := Dir(wt)
	if err != nil || dir != filepath.Join(root, ".git", "hooks") {
		t.Fatalf("Dir in a linked worktree: %q %v", dir, err)
	}
	git(t, root, "config", "core.hooksPath", "hk")
	if dir, err := Dir(wt); err != nil || dir != filepath.Join(wt, "hk") {
		t.Fatalf("relative core.hooksPath: %q %v", dir, err)
	}
}

func TestScriptFallsBackToPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	// a fake strata on PATH records how it was called
	os.WriteFile(filepath.Join(bin, "strata"), []byte("#!/bin/sh\necho \"path strata $*\"\n"), 0o755)
	hook := filepath.Join(dir, HookName)
	os.WriteFile(hook, Script(filepath.Join(dir, "gone", "strata")), 0o755)
	cmd := exec.Command(hook)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "path strata hooks run pre-commit\n" {
		t.Fatalf("%q %v", out, err)
	}
	// a failing chained hook stops the commit with its status
	os.WriteFile(hook+ChainedSuffix, []byte("#!/bin/sh\nexit 7\n"), 0o755)
	err = exec.Command(hook).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("chained failure: %v", err)
	}
}
