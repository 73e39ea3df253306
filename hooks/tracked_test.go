package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tracked answers for the index and for HEAD's commit, judges a folder
// where it really is, and never counts a file of .git or outside the work
// tree (attack35b M2).
func TestTracked(t *testing.T) {
	root := newRepo(t)
	write := func(rel string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unborn := filepath.Join(root, ".githooks", "pre-merge-commit")
	write(".githooks/pre-merge-commit")
	git(t, root, "add", ".githooks/pre-merge-commit")
	if ok, err := Tracked(root, unborn); err != nil || !ok {
		t.Fatalf("staged before the first commit: %v %v", ok, err)
	}
	for _, rel := range []string{".githooks/pre-commit", "tools/hooks/pre-commit", ".githooks/head-only"} {
		write(rel)
	}
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "hooks")
	git(t, root, "rm", "-q", "--cached", ".githooks/head-only")
	write(".githooks/untracked")
	write(".git/hooks/pre-commit")
	if err := os.Symlink("tools/hooks", filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	// a hooks folder in a repository of its own: a submodule-like nested
	// clone, and another repository a local core.hooksPath names
	// (attack35c M2)
	nested := filepath.Join(root, "vendor", "hooks")
	other := filepath.Join(t.TempDir(), "team-hooks")
	for _, r := range []string{nested, other} {
		if err := os.MkdirAll(r, 0o755); err != nil {
			t.Fatal(err)
		}
		git(t, r, "init", "-q")
		if err := os.WriteFile(filepath.Join(r, "pre-commit"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		git(t, r, "add", "pre-commit")
		git(t, r, "commit", "-q", "-m", "hook")
		if err := os.WriteFile(filepath.Join(r, "post-merge"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{filepath.Join(root, ".githooks", "pre-commit"), true},
		{filepath.Join(root, ".githooks", "head-only"), true},        // in HEAD, not in the index
		{filepath.Join(root, "linked", "pre-commit"), true},          // tools/hooks/pre-commit, where it really is
		{filepath.Join(root, "gone", "deeper", "pre-commit"), false}, // a folder not made yet
		{filepath.Join(root, ".githooks", "untracked"), false},       //
		{filepath.Join(root, ".git", "hooks", "pre-commit"), false},  // git's own folder
		{filepath.Join(outside, "pre-commit"), false},                // outside the work tree
		{filepath.Join(root, ".githooks", "pre-applypatch"), false},  // no such file
		{filepath.Join(root, "tools", "hooks", "..", "hooks", "pre-commit"), true},
		{filepath.Join(nested, "pre-commit"), true},  // the nested repository's own
		{filepath.Join(nested, "post-merge"), false}, // there, untracked
		{filepath.Join(other, "pre-commit"), true},   // another repository's own
		{filepath.Join(other, "post-merge"), false},  //
		{filepath.Join(other, ".git", "hooks", "x"), false},
	} {
		if ok, err := Tracked(root, tc.path); err != nil || ok != tc.want {
			t.Errorf("Tracked(%s) = %v, %v; want %v", tc.path, ok, err, tc.want)
		}
	}
}

// A committed hook folder's hook is neither overwritten nor moved by
// install, and strata's hook committed there (by an older install) is not
// removed by uninstall: each refuses, changing nothing (attack35b M2).
func TestInstallAndUninstallLeaveATrackedHook(t *testing.T) {
	root := newRepo(t)
	team := []byte("#!/bin/sh\necho TEAM-HOOK-RAN\n")
	dir := filepath.Join(root, ".githooks")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HookName), team, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "team hooks")
	git(t, root, "config", "core.hooksPath", ".githooks")
	_, err := Install(root, "/opt/strata")
	if err == nil || !strings.Contains(err.Error(), "a hook file git tracks") || !strings.HasSuffix(err.Error(), "strata hooks run pre-commit") {
		t.Fatalf("install: %v", err)
	}
	if _, err := InstallHook(root, "/opt/strata", HookName); err == nil {
		t.Fatal("InstallHook wrote over a tracked hook")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, HookName)); string(got) != string(team) {
		t.Fatalf("the team's hook changed: %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("install wrote in the committed folder: %v", ents)
	}

	// strata's hook, committed: uninstall leaves it
	if err := os.WriteFile(filepath.Join(dir, HookName), ScriptFor(HookName, "/opt/strata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HookName+ChainedSuffix), team, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "commit", "-q", "--no-verify", "-a", "-m", "strata's hook, by mistake")
	for _, f := range []func() error{
		func() error { _, err := Uninstall(root); return err },
		func() error { _, err := UninstallHook(root, HookName); return err },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "in a file git tracks") {
			t.Fatalf("uninstall: %v", err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, HookName)); string(got) != string(ScriptFor(HookName, "/opt/strata")) {
		t.Fatalf("uninstall changed the tracked hook: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, HookName+ChainedSuffix)); err != nil {
		t.Fatalf("uninstall moved the chained hook: %v", err)
	}
}
