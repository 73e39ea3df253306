package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outside makes a folder outside the work tree root holding a user's own
// pre-commit executable, as ~/.local/bin does.
func outside(t *testing.T) (dir string, mine []byte) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mine = []byte("#!/bin/sh\necho the pre-commit framework's CLI\n")
	if err := os.WriteFile(filepath.Join(dir, HookName), mine, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, mine
}

// untouched fails when dir holds anything but the user's pre-commit.
func untouched(t *testing.T, dir string, mine []byte) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != HookName {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("written outside the work tree: %v", names)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, HookName)); string(got) != string(mine) {
		t.Fatalf("the user's pre-commit changed: %q", got)
	}
}

// A committed symbolic link (.githooks -> the user's bin folder) that the
// repository's core.hooksPath names is refused, naming the link and where
// it leads, and nothing is written there (attack25 K2).
func TestInstallRefusesHooksPathLeadingOutOfTheWorkTree(t *testing.T) {
	for _, tc := range []struct{ name, hooksPath, link string }{
		{"relative link", ".githooks", ""},
		{"absolute link", ".githooks", "abs"},
		{"link on the way", "tools/hooks", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRepo(t)
			bin, mine := outside(t)
			linkName := filepath.Join(root, strings.Split(tc.hooksPath, "/")[0])
			target, err := filepath.Rel(root, bin)
			if err != nil {
				t.Fatal(err)
			}
			if tc.link == "abs" {
				target = bin
			}
			if tc.hooksPath == "tools/hooks" {
				if err := os.Mkdir(filepath.Join(bin, "hooks"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bin, "hooks", HookName), mine, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, linkName); err != nil {
				t.Fatal(err)
			}
			git(t, root, "config", "core.hooksPath", tc.hooksPath)
			_, err = Install(root, "/opt/strata")
			var refused *outOfTreeError
			if !errors.As(err, &refused) {
				t.Fatalf("install: %v, want a refusal", err)
			}
			if !strings.HasPrefix(err.Error(), filepath.Base(linkName)+": a symbolic link to "+target) || !strings.Contains(err.Error(), "outside the work tree") {
				t.Fatalf("message: %v", err)
			}
			if tc.hooksPath == "tools/hooks" {
				bin = filepath.Join(bin, "hooks")
			}
			untouched(t, bin, mine)
		})
	}
}

// A hooks folder that is a link within the work tree, or to the git
// directory's hooks/, is the repository's own: installed there.
func TestInstallFollowsALinkInsideTheWorkTree(t *testing.T) {
	root := newRepo(t)
	if err := os.MkdirAll(filepath.Join(root, "tools", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("tools/hooks", filepath.Join(root, ".githooks")); err != nil {
		t.Fatal(err)
	}
	git(t, root, "config", "core.hooksPath", ".githooks")
	if _, err := Install(root, "/opt/strata"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "hooks", HookName)); err != nil {
		t.Fatal(err)
	}
}

// The folder checked is the folder written in: swapped for a link out of
// the work tree after the check, nothing is made, moved or written
// through it.
func TestInstallWritesInTheFolderItChecked(t *testing.T) {
	root := newRepo(t)
	bin, mine := outside(t)
	hooksDir := filepath.Join(root, ".githooks")
	if err := os.Mkdir(hooksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ok, err := staysInTree(root, hooksDir)
	if err != nil || ok == nil {
		t.Fatalf("check: %v", err)
	}
	// swapped after the check, as a checkout racing install could
	if err := os.Remove(hooksDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, hooksDir); err != nil {
		t.Fatal(err)
	}
	f, err := readHook(filepath.Join(hooksDir, HookName), HookName)
	if err != nil || f.kind != foreignHook {
		t.Fatalf("read: %+v %v", f, err)
	}
	if _, err := installHook(hooksDir, HookName, "/opt/strata", ok); err == nil {
		t.Fatal("installed through the swapped folder")
	}
	untouched(t, bin, mine)
}

// What an older strata installed through such a link, uninstall still
// removes, putting the user's file back.
func TestUninstallUndoesAnOlderInstallThroughALink(t *testing.T) {
	root := newRepo(t)
	bin, mine := outside(t)
	if err := os.Symlink(bin, filepath.Join(root, ".githooks")); err != nil {
		t.Fatal(err)
	}
	git(t, root, "config", "core.hooksPath", ".githooks")
	for _, name := range Hooks { // as an older strata did, unchecked
		if _, err := installHook(filepath.Join(root, ".githooks"), name, "/opt/strata", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(bin, HookName+ChainedSuffix)); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(root); err != nil {
		t.Fatal(err)
	}
	untouched(t, bin, mine)
}

// An absolute core.hooksPath written through another name of the work
// tree (git config core.hooksPath "$PWD/.githooks" in ~/src/repo, where
// ~/src links to the real storage; or a link to the repository itself)
// is judged from where it really is: the committed .githooks leading out
// is refused as in the relative form, and nothing is written there
// (attack25 N4).
func TestInstallRefusesAbsoluteHooksPathThroughAnAliasOfTheWorkTree(t *testing.T) {
	for _, alias := range []string{"parent", "repo"} {
		t.Run(alias, func(t *testing.T) {
			root := newRepo(t)
			bin, mine := outside(t)
			target, err := filepath.Rel(root, bin)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(root, ".githooks")); err != nil {
				t.Fatal(err)
			}
			aliases, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			logical := filepath.Join(aliases, "alias")
			if alias == "parent" { // ~/src -> /data/src; the user is in ~/src/repo
				if err := os.Symlink(filepath.Dir(root), filepath.Join(aliases, "src")); err != nil {
					t.Fatal(err)
				}
				logical = filepath.Join(aliases, "src", filepath.Base(root))
			} else if err := os.Symlink(root, logical); err != nil {
				t.Fatal(err)
			}
			hooksPath := filepath.Join(logical, ".githooks")
			git(t, root, "config", "core.hooksPath", hooksPath)
			_, err = Install(root, "/opt/strata")
			var refused *outOfTreeError
			if !errors.As(err, &refused) {
				t.Fatalf("install: %v, want a refusal", err)
			}
			if !strings.HasPrefix(err.Error(), hooksPath+": a symbolic link to "+target) || !strings.Contains(err.Error(), "core.hooksPath names it") {
				t.Fatalf("message: %v", err)
			}
			untouched(t, bin, mine)
		})
	}
}

// The same absolute value through an alias, naming a folder that is
// really in the work tree (or a link to one there, or one not made yet),
// is the repository's own: installed there.
func TestInstallFollowsAnAbsoluteHooksPathThroughAnAlias(t *testing.T) {
	for _, name := range []string{".githooks", ".linked", "new/hooks"} {
		t.Run(name, func(t *testing.T) {
			root := newRepo(t)
			if err := os.MkdirAll(filepath.Join(root, "tools", "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("tools/hooks", filepath.Join(root, ".linked")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, ".githooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			aliases, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(root, filepath.Join(aliases, "alias")); err != nil {
				t.Fatal(err)
			}
			git(t, root, "config", "core.hooksPath", filepath.Join(aliases, "alias", name))
			if _, err := Install(root, "/opt/strata"); err != nil {
				t.Fatal(err)
			}
			really := map[string]string{".githooks": ".githooks", ".linked": "tools/hooks", "new/hooks": "new/hooks"}[name]
			if _, err := os.Stat(filepath.Join(root, really, HookName)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A hooks folder of the user's own outside the work tree, reached through
// a link of the user's, is not judged; one that reaches a committed link
// out of the work tree is (~/myhooks -> repo/.githooks -> ~/.local/bin).
func TestInstallJudgesALinkOutsideOnlyWhenItLeadsThroughTheWorkTree(t *testing.T) {
	root := newRepo(t)
	bin, mine := outside(t)
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(root, ".githooks")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, ".githooks"), filepath.Join(home, "myhooks")); err != nil {
		t.Fatal(err)
	}
	git(t, root, "config", "core.hooksPath", filepath.Join(home, "myhooks"))
	_, err = Install(root, "/opt/strata")
	var refused *outOfTreeError
	if !errors.As(err, &refused) || !strings.HasPrefix(err.Error(), ".githooks: a symbolic link to "+bin) {
		t.Fatalf("install: %v, want a refusal naming .githooks", err)
	}
	untouched(t, bin, mine)

	if err := os.Remove(filepath.Join(home, "myhooks")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(home, "myhooks")); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(root, "/opt/strata"); err != nil {
		t.Fatalf("the user's own folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bin, HookName+ChainedSuffix)); err != nil {
		t.Fatal(err)
	}
}

// A committed link into the git directory anywhere but its hooks/
// (.githooks -> .git, -> .git/objects) is refused as a link out of the
// tree is: strata's hooks would be written among git's own files
// (attack25 recheck). A core.hooksPath that names such a folder with no
// link is the user's own and is left alone.
func TestInstallRefusesALinkIntoTheGitDirectory(t *testing.T) {
	for _, target := range []string{".git", ".git/objects"} {
		t.Run(target, func(t *testing.T) {
			root := newRepo(t)
			if err := os.Symlink(target, filepath.Join(root, ".githooks")); err != nil {
				t.Fatal(err)
			}
			git(t, root, "config", "core.hooksPath", ".githooks")
			_, err := Install(root, "/opt/strata")
			var refused *outOfTreeError
			if !errors.As(err, &refused) {
				t.Fatalf("install: %v, want a refusal", err)
			}
			if _, err := os.Lstat(filepath.Join(root, target, HookName)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s/%s written: %v", target, HookName, err)
			}
		})
	}
}
