// Package hooks connects strata to the hooks of git and Claude Code (docs/contract.md
// §8): it installs and removes the git pre-commit hook (in the directory git
// really uses, chaining a hook that was there before), runs that hook's check
// over the staged blobs of kept files, and merges strata's entries into, or
// out of, Claude Code's .claude/settings.json without disturbing anything
// else in it.
package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/atomicfile"
)

// The git hooks strata installs: pre-commit checks each commit;
// pre-merge-commit the merge commit `git merge` makes when nothing
// conflicts, for which git runs no pre-commit hook (a conflicted merge is
// concluded by `git commit`, which runs pre-commit); pre-applypatch each
// commit `git am` makes from a patch (after applying it to the index).
const (
	HookName      = "pre-commit"
	MergeHookName = "pre-merge-commit"
	PatchHookName = "pre-applypatch"
)

// Hooks are the hooks Install installs, in order.
var Hooks = []string{HookName, MergeHookName, PatchHookName}

// ChainedSuffix names where an existing hook moves when strata's is
// installed: pre-commit.strata-chained, run first by strata's hook.
const ChainedSuffix = ".strata-chained"

// marker is the line that identifies a hook file as strata's own: "#
// strata pre-commit hook", "# strata pre-merge-commit hook".
func marker(name string) string { return "# strata " + name + " hook" }

// Dir returns the hooks directory git uses for the work tree at root, as
// `git rev-parse --git-path hooks` answers it: core.hooksPath when set (a
// relative value is relative to the work-tree root, where git runs hooks),
// else the common git directory's hooks/ (shared by linked worktrees). It
// needs the git binary.
func Dir(root string) (string, error) {
	cmd := exec.Command("git", "rev-parse", "--git-path", "hooks")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git rev-parse --git-path hooks: %s", msg)
		}
		return "", fmt.Errorf("git rev-parse --git-path hooks: %w", err)
	}
	dir := strings.TrimRight(string(out), "\r\n")
	if dir == "" {
		return "", errors.New("git rev-parse --git-path hooks: empty answer")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return filepath.Clean(dir), nil
}

// Script is the pre-commit hook strata installs. It runs a chained hook
// first (when present and executable, as git itself would) and stops on its
// failure, then runs `strata hooks run pre-commit` with the strata binary at
// exe; when that binary is gone (moved, uninstalled), it falls back to
// `strata` on PATH, so a stale path never silently disables the check.
func Script(exe string) []byte { return ScriptFor(HookName, exe) }

// ScriptFor is Script for the hook name (one of Hooks).
func ScriptFor(name, exe string) []byte {
	what := "before each commit"
	switch name {
	case MergeHookName:
		what = "of a merge git commits by itself"
	case PatchHookName:
		what = "of each patch git am applies"
	}
	return []byte(`#!/bin/sh
` + marker(name) + `: checks the staged state files ` + what + `.
# Installed by ` + "`strata hooks install`" + `; ` + "`strata hooks uninstall`" + ` removes it and puts
# back the hook it chained (` + name + ChainedSuffix + `), byte for byte.
chained="$(dirname "$0")/` + name + ChainedSuffix + `"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
strata=` + shellQuote(exe) + `
[ -x "$strata" ] || strata=strata
exec "$strata" hooks run ` + name + `
`)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Executable is the strata binary the installed hook calls: the absolute
// path of the running executable, so the hook works where PATH is minimal
// (IDEs, GUI git clients). When `strata` on PATH is that same file, its PATH
// name is kept instead (say /opt/homebrew/bin/strata rather than the
// versioned file it links to), so upgrades do not strand the hook. When the
// running executable cannot be found, it is plain "strata", looked up on PATH
// when the hook runs.
func Executable() string {
	self, err := os.Executable()
	if err != nil || !filepath.IsAbs(self) {
		return "strata"
	}
	if onPath, err := exec.LookPath("strata"); err == nil {
		if abs, err := filepath.Abs(onPath); err == nil {
			a, errA := os.Stat(abs)
			b, errB := os.Stat(self)
			if errA == nil && errB == nil && os.SameFile(a, b) {
				return abs
			}
		}
	}
	return self
}

// Installed reports what Install did or found for one hook.
type Installed struct {
	Name    string // the hook's name
	Hook    string // the hook file
	Chained string // where the hook that was there before now lives; "" when none
	Changed bool   // false when the same hook was already installed
}

// Install installs strata's hooks (Hooks), calling exe, in the hooks
// directory git uses for the work tree at root, and reports each. It looks
// at all of them before it changes any: when one is refused, nothing is
// installed. See InstallHook.
func Install(root, exe string) ([]Installed, error) {
	dir, err := Dir(root)
	if err != nil {
		return nil, err
	}
	if err := notShared(root, dir); err != nil {
		return nil, err
	}
	for _, name := range Hooks {
		hook := filepath.Join(dir, name)
		ours, current, err := readHook(hook, name)
		if err != nil {
			return nil, err
		}
		if err := refused(hook, name, ours, current); err != nil {
			return nil, err
		}
	}
	var out []Installed
	for _, name := range Hooks {
		res, err := installHook(dir, name, exe)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// InstallHook installs strata's hook name, calling exe, in the hooks
// directory git uses for the work tree at root. An existing hook that is
// not strata's is moved, unchanged (bytes, mode, or the symbolic link
// itself), to NAME.strata-chained and run first by strata's hook.
// InstallHook is idempotent: when strata's hook is already there with the
// same content it changes nothing; a strata hook naming another binary is
// rewritten in place. It refuses, changing nothing, when a foreign hook and
// a chained hook both exist (a second chain would lose one of them), and
// when the foreign hook finds what to run by its own name (nameBound).
func InstallHook(root, exe, name string) (Installed, error) {
	dir, err := Dir(root)
	if err != nil {
		return Installed{}, err
	}
	if err := notShared(root, dir); err != nil {
		return Installed{}, err
	}
	return installHook(dir, name, exe)
}

func installHook(dir, name, exe string) (Installed, error) {
	hook := filepath.Join(dir, name)
	chained := hook + ChainedSuffix
	res := Installed{Name: name, Hook: hook}
	if exists(chained) {
		res.Chained = chained
	}
	want := ScriptFor(name, exe)
	ours, current, err := readHook(hook, name)
	switch {
	case err != nil:
		return res, err
	case ours && bytes.Equal(current, want):
		if st, err := os.Stat(hook); err == nil && st.Mode().Perm()&0o111 == 0o111 {
			return res, nil
		}
	case !ours && current != nil:
		if err := refused(hook, name, ours, current); err != nil {
			return res, err
		}
		if err := os.Rename(hook, chained); err != nil {
			return res, fmt.Errorf("chain the existing hook: %w", err)
		}
		res.Chained = chained
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("create hooks directory: %w", err)
	}
	if err := writeExecutable(hook, want); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// refused says why a foreign hook at hook (content current) cannot be
// chained: it finds what to run by its own name, or a chained hook is
// already there. Strata's own hook, or none, is never refused.
func refused(hook, name string, ours bool, current []byte) error {
	if ours || current == nil {
		return nil
	}
	chained := hook + ChainedSuffix
	if nameBound(current) {
		return fmt.Errorf("%s: this hook finds what to run by its own file name (husky's does), so moved to %s it would run nothing; leave it, and add this line to the script it runs (for husky, .husky/%s): strata hooks run %s", hook, filepath.Base(chained), name, name)
	}
	if exists(chained) {
		return fmt.Errorf("%s: a hook is installed and %s already exists; move one of them away, then run strata hooks install again", hook, filepath.Base(chained))
	}
	return nil
}

// nameBound reports whether a hook script works out what to run from its
// own file name, as husky's do (`basename "$0"`, or sourcing husky's
// dispatcher beside it, which does): renamed, such a hook runs nothing and
// lets every commit through.
func nameBound(script []byte) bool {
	return bytes.Contains(script, []byte("husky")) || bytes.Contains(script, []byte(`$(dirname "$0")/h"`)) ||
		(bytes.Contains(script, []byte("basename")) && bytes.Contains(script, []byte("$0")))
}

// notShared refuses a hooks directory that core.hooksPath names outside
// this repository's own configuration: in the user's global or the system
// git configuration, every repository runs its hooks, and strata's check
// there would judge them all (and uninstall in any one would remove it for
// all), as the pre-commit framework refuses too; given in git's environment
// (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT: what `git -c` passes to the
// commands it runs), it holds only for that one command, so a plain `git
// commit` would not run strata's hook there, while whatever else uses that
// directory would. A value set for this repository is its own.
func notShared(root, dir string) error {
	cmd := exec.Command("git", "config", "--show-scope", "--get", "core.hooksPath")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil // not set, or a git without --show-scope (before 2.26)
	}
	scope, _, _ := strings.Cut(string(out), "\t")
	switch scope {
	case "global", "system":
		return fmt.Errorf("%s: core.hooksPath in your %s git configuration names this hooks directory, which every repository shares; strata's hook there would check them all. Give this repository its own (git config core.hooksPath .git/hooks) and run this again, or add this line to that directory's %s yourself: strata hooks run %s", dir, scope, HookName, HookName)
	case "command":
		return fmt.Errorf("%s: core.hooksPath given in git's environment (git -c, GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT) names this hooks directory; a plain git commit does not use it. Run strata hooks install without that setting, or set the repository's own (git config core.hooksPath DIR) and run this again", dir)
	}
	return nil
}

// Removed reports what Uninstall did for one hook.
type Removed struct {
	Name     string // the hook's name
	Hook     string // the hook file
	Restored bool   // the chained hook was moved back to Hook
	Changed  bool   // false when strata's hook was not installed
}

// Uninstall removes strata's hooks (Hooks) and reports each (UninstallHook).
func Uninstall(root string) ([]Removed, error) {
	var out []Removed
	for _, name := range Hooks {
		res, err := UninstallHook(root, name)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// UninstallHook removes strata's hook name and moves the hook it chained
// back in its place, exactly as it was. A hook that is not strata's is left
// alone. It is idempotent.
func UninstallHook(root, name string) (Removed, error) {
	dir, err := Dir(root)
	if err != nil {
		return Removed{}, err
	}
	hook := filepath.Join(dir, name)
	chained := hook + ChainedSuffix
	res := Removed{Name: name, Hook: hook}
	ours, current, err := readHook(hook, name)
	if err != nil {
		return res, err
	}
	if !ours && current != nil {
		return uninstallLegacy(hook, name, chained, res)
	}
	if ours {
		if err := os.Remove(hook); err != nil {
			return res, fmt.Errorf("remove hook: %w", err)
		}
		res.Changed = true
	}
	if exists(chained) {
		if err := os.Rename(chained, hook); err != nil {
			return res, fmt.Errorf("restore the chained hook: %w", err)
		}
		res.Restored, res.Changed = true, true
	}
	return res, nil
}

// LegacySuffix names where the pre-commit framework moves a hook it finds
// when it installs its own, and runs it from its hook.
const LegacySuffix = ".legacy"

// uninstallLegacy handles a foreign hook at the hook's place: when it is the
// pre-commit framework's, installed after strata's, strata's hook now runs
// as pre-commit.legacy. It is removed there, and the hook strata chained
// takes its place, so the framework runs what it ran before strata came.
// Any other foreign hook means strata's is not installed.
func uninstallLegacy(hook, name, chained string, res Removed) (Removed, error) {
	legacy := hook + LegacySuffix
	ours, _, err := readHook(legacy, name)
	if err != nil || !ours {
		return res, err
	}
	if err := os.Remove(legacy); err != nil {
		return res, fmt.Errorf("remove hook: %w", err)
	}
	res.Hook, res.Changed = legacy, true
	if exists(chained) {
		if err := os.Rename(chained, legacy); err != nil {
			return res, fmt.Errorf("restore the chained hook: %w", err)
		}
		res.Restored = true
	}
	return res, nil
}

// readHook reads a hook file: ours reports whether it is strata's; content
// is nil when there is no hook. A symbolic link is never strata's, and its
// content is reported as its target, not read through.
func readHook(hook, name string) (ours bool, content []byte, err error) {
	st, err := os.Lstat(hook)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("read hook: %w", err)
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(hook)
		return false, []byte(target), err
	case !st.Mode().IsRegular():
		return false, nil, fmt.Errorf("%s: not a regular file", hook)
	}
	data, err := os.ReadFile(hook)
	if err != nil {
		return false, nil, fmt.Errorf("read hook: %w", err)
	}
	return bytes.Contains(data, []byte("\n"+marker(name)+":")), data, nil
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// writeExecutable replaces name atomically with an executable file.
func writeExecutable(name string, data []byte) error {
	if err := atomicfile.Write(name, data, 0o755); err != nil {
		return fmt.Errorf("write hook: %w", err)
	}
	return nil
}
