package hooks

import (
	"bytes"
	"errors"
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

// TestWrittenExactly: strata's own hook is recognised for any binary it
// may name, and only byte for byte; anything else carrying its marker line
// is an edited hook, strata's no more to rewrite or remove (attack23 F4).
func TestWrittenExactly(t *testing.T) {
	for _, name := range Hooks {
		for _, exe := range []string{"strata", "/opt/strata", "/new/it's/strata", "/a b/'x'/''", "/weird\nline/strata", "", `/q\'\''/s`} {
			script := ScriptFor(name, exe)
			if !written(name, script) {
				t.Errorf("%s %q: not recognised", name, exe)
			}
			f := writeTemp(t, script)
			if h, err := readHook(f, name); err != nil || h.kind != strataHook {
				t.Errorf("%s %q: kind %v %v", name, exe, h.kind, err)
			}
			for _, edit := range [][]byte{
				append(append([]byte{}, script...), "npm run lint\n"...),
				script[:len(script)-1],
				bytes.Replace(script, []byte("exit $?"), []byte("true"), 1),
				bytes.ReplaceAll(script, []byte("\n"), []byte("\r\n")),
				append([]byte("#!/bin/sh\nset -e\n"), script[len("#!/bin/sh\n"):]...),
			} {
				if written(name, edit) {
					t.Errorf("%s %q: edited script taken for strata's:\n%s", name, exe, edit)
				}
				if h, err := readHook(writeTemp(t, edit), name); err != nil || h.kind != editedHook {
					t.Errorf("%s %q: edited kind %v %v", name, exe, h.kind, err)
				}
			}
		}
	}
	// a quoted binary that state.SingleQuoted would not write
	bad := bytes.Replace(Script("/opt/strata"), []byte(`strata='/opt/strata'`), []byte(`strata='/opt/'strata'`), 1)
	if written(HookName, bad) {
		t.Error("non-canonical quoting taken for strata's")
	}
	// another hook's script is not this hook's
	if written(HookName, ScriptFor(MergeHookName, "/opt/strata")) {
		t.Error("pre-merge-commit's script taken for pre-commit's")
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(f, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestNameBound: a hook that reads its own name or path in any common form
// is refused, not renamed (attack23 F3); one that does not is chained.
func TestNameBound(t *testing.T) {
	for _, s := range []string{
		`. "$(dirname "$0")/h"`, `n=$(basename "$0")`, `h="${0##*/}"; exec scripts/$h`, `case "$0" in *pre-commit) lint;; esac`,
		`exec "scripts/$(basename $0)"`, `me=${0%/*}`, `cd "$(dirname "${BASH_SOURCE[0]}")"`, `name=$ZSH_ARGZERO`,
		"import os, sys\nos.execv(os.path.basename(sys.argv[0]))", "HERE = os.path.dirname(__file__)",
		"require(path.basename(__filename))", "const h = process.argv[1]", "File.basename(__FILE__)", "puts $PROGRAM_NAME",
		"# husky\n. ./h",
	} {
		if !nameBound([]byte("#!/bin/sh\n" + s + "\n")) {
			t.Errorf("not name-bound: %s", s)
		}
	}
	for _, s := range []string{"npm run lint", `exec make check "$@"`, `git diff --cached --name-only | grep -q TODO && exit 1`, `echo "$1"`} {
		if nameBound([]byte("#!/bin/sh\n" + s + "\n")) {
			t.Errorf("name-bound: %s", s)
		}
	}
}

// TestIsFramework: the pre-commit framework's hook, by its current ID and
// by the ones its older versions wrote.
func TestIsFramework(t *testing.T) {
	for _, id := range frameworkIDs {
		if !IsFramework([]byte("#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n# ID: " + id + "\n")) {
			t.Errorf("%s: not the framework's", id)
		}
	}
	if IsFramework(Script("/opt/strata")) || IsFramework([]byte("#!/bin/sh\n# pre-commit\nexit 0\n")) {
		t.Error("another hook taken for the framework's")
	}
}

// olderScript is, byte for byte, the pre-commit hook every strata before
// session 24 installed (for the binary /old/strata): it asked dirname for
// the chained hook's folder, a process more on every commit.
const olderScript = `#!/bin/sh
# strata pre-commit hook: checks the staged state files before each commit.
# Installed by ` + "`strata hooks install`; `strata hooks uninstall`" + ` removes it and puts
# back the hook it chained (pre-commit.strata-chained), byte for byte.
chained="$(dirname "$0")/pre-commit.strata-chained"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
strata='/old/strata'
[ -x "$strata" ] || strata=strata
exec "$strata" hooks run pre-commit
`

// The hook an older strata installed is still strata's: install rewrites
// it to today's form, which starts no process but strata's own; uninstall
// removes it; an edit of it is the user's. Today's form runs the chained
// hook from the folder git runs the hook in, as the older one did, and
// from "." for a bare name, as dirname gives.
func TestOlderHookFormIsStrata(t *testing.T) {
	if !written(HookName, []byte(olderScript)) {
		t.Fatal("the older form is not recognised as strata's")
	}
	if written(HookName, []byte(strings.Replace(olderScript, "exit $?", "true", 1))) {
		t.Fatal("an edited older form taken for strata's")
	}
	if bytes.Contains(Script("/opt/strata"), []byte("dirname")) {
		t.Fatal("today's form still runs dirname")
	}

	root := newRepo(t)
	hook := filepath.Join(root, ".git", "hooks", HookName)
	if err := os.WriteFile(hook, []byte(olderScript), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := InstallHook(root, "/old/strata", HookName)
	if err != nil || !res.Changed || res.Chained != "" {
		t.Fatalf("install over the older form: %+v %v", res, err)
	}
	if got, _ := os.ReadFile(hook); !bytes.Equal(got, ScriptFor(HookName, "/old/strata")) {
		t.Fatalf("not rewritten to today's form:\n%s", got)
	}
	if err := os.WriteFile(hook, []byte(olderScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if res, err := UninstallHook(root, HookName); err != nil || !res.Changed {
		t.Fatalf("uninstall of the older form: %+v %v", res, err)
	}
	if _, err := os.Lstat(hook); !os.IsNotExist(err) {
		t.Fatalf("the older form is still there: %v", err)
	}

	// the chained hook runs from where the hook is, by a path and by a bare name
	dir := t.TempDir()
	script := ScriptFor(HookName, "/bin/true")
	if err := os.WriteFile(filepath.Join(dir, HookName), script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HookName+ChainedSuffix), []byte("#!/bin/sh\necho chained \"$@\" >> \"$OUT\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, run := range []struct{ dir, arg0 string }{
		{root, filepath.Join(dir, HookName)},                             // absolute, as git runs it from core.hooksPath
		{filepath.Dir(dir), filepath.Join(filepath.Base(dir), HookName)}, // relative, .git/hooks/NAME
		{dir, HookName}, // a bare name: "." as dirname gives
	} {
		cmd := exec.Command("sh", "-c", `exec "$0" a`, run.arg0)
		if run.arg0 == HookName {
			cmd = exec.Command("sh", HookName, "a") // $0 = NAME, no slash
		}
		cmd.Dir, cmd.Env = run.dir, append(os.Environ(), "OUT="+out, "PATH="+os.Getenv("PATH"))
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("hook run as %q from %s: %v; want the chained hook's exit 3", run.arg0, run.dir, err)
		}
	}
	if got, _ := os.ReadFile(out); string(got) != "chained a\nchained a\nchained a\n" {
		t.Errorf("the chained hook ran %q; want three times with the hook's arguments", got)
	}
}
