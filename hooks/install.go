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
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
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
	cmd := gitstore.Command(exec.Command("git", "rev-parse", "--git-path", "hooks"), gitstore.GitName(root)) // as the user's git names it, through a link
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
case $0 in */*) chained=${0%/*}/` + name + ChainedSuffix + ` ;; *) chained=./` + name + ChainedSuffix + ` ;; esac
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
strata=` + state.SingleQuoted(exe) + `
[ -x "$strata" ] || strata=strata
exec "$strata" hooks run ` + name + `
`)
}

// scriptDirname is the form every strata before session 24 wrote: the
// same, but for the folder of the chained hook, which it asked dirname
// for — a process more on every commit (a fork and an exec: ~1 ms on most
// machines, 5 ms or more where a page fault is dear). The case above
// gives the same folder for every path git runs a hook by (it always has
// a slash: .git/hooks/NAME, or core.hooksPath's folder joined to NAME),
// and "." for a bare name, as dirname does.
func scriptDirname(name, exe string) []byte {
	return bytes.Replace(ScriptFor(name, exe),
		[]byte("case $0 in */*) chained=${0%/*}/"+name+ChainedSuffix+" ;; *) chained=./"+name+ChainedSuffix+" ;; esac\n"),
		[]byte(`chained="$(dirname "$0")/`+name+ChainedSuffix+`"`+"\n"), 1)
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
	Hook    string // the file strata's hook is in: NAME, or NAME.legacy under the pre-commit framework
	Chained string // where the hook that was there before now lives; "" when none
	Changed bool   // false when the same hook was already installed
	// UnderFramework: the pre-commit framework's hook is NAME and runs
	// strata's as NAME.legacy (the framework was installed after strata)
	UnderFramework bool
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
	ok, err := staysInTree(root, dir)
	if err != nil {
		return nil, err
	}
	for _, name := range Hooks {
		if err := notTracked(root, dir, name); err != nil {
			return nil, err
		}
	}
	if err := notTrackedFolder(root, dir); err != nil {
		return nil, err
	}
	for _, name := range Hooks {
		f, err := readHook(filepath.Join(dir, name), name)
		if err != nil {
			return nil, err
		}
		if err := installRefusal(f, name); err != nil {
			return nil, err
		}
	}
	var out []Installed
	for _, name := range Hooks {
		res, err := installHook(dir, name, exe, ok)
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
// same content it changes nothing; a hook exactly as strata wrote it for
// another binary is rewritten in place, also as NAME.legacy under the
// pre-commit framework. It refuses, changing nothing (installRefusal): a
// strata hook someone edited, the pre-commit framework's hook, a foreign
// hook that reads its own name (nameBound), a foreign hook when a
// chained hook exists too (a second chain would lose one of them), and
// any hook file git tracks (Tracked).
func InstallHook(root, exe, name string) (Installed, error) {
	dir, err := Dir(root)
	if err != nil {
		return Installed{}, err
	}
	if err := notShared(root, dir); err != nil {
		return Installed{}, err
	}
	ok, err := staysInTree(root, dir)
	if err != nil {
		return Installed{}, err
	}
	if err := notTracked(root, dir, name); err != nil {
		return Installed{}, err
	}
	if err := notTrackedFolder(root, dir); err != nil {
		return Installed{}, err
	}
	return installHook(dir, name, exe, ok)
}

// notTracked refuses to install hook name in dir when git tracks the file
// there (Tracked): install never writes over, nor moves aside, a hook the
// repository holds.
func notTracked(root, dir, name string) error {
	hook := filepath.Join(dir, name)
	tracked, err := Tracked(root, hook)
	if err != nil {
		return err
	}
	if tracked {
		return trackedError(hook, name)
	}
	return nil
}

// notTrackedFolder refuses to install in a hooks folder that holds a file
// git tracks (a committed .githooks/ whose tracked hooks are others, say
// post-checkout): a hook strata writes there, untracked, would be
// committed with the next `git add -A`, calling this machine's binary in
// every clone. The line to add to the repository's own hook is the way.
func notTrackedFolder(root, dir string) error {
	tracked, err := Tracked(root, dir)
	if err != nil {
		return err
	}
	if tracked {
		return fmt.Errorf("%s: a hooks folder git tracks (the repository's own); nothing installed: a hook strata writes there would be committed with the next git add -A, calling this machine's binary in every clone. Add this line to the repository's pre-commit hook in a commit: strata hooks run %s", dir, HookName)
	}
	return nil
}

// installHook installs hook name in dir. ok, when not nil, judges where
// dir really is at each step (staysInTree): the directory is made, the
// existing hook moved and strata's written through the directory opened
// and judged, never through a symbolic link put in its path since.
func installHook(dir, name, exe string, ok func(dir, real string) error) (Installed, error) {
	hook := filepath.Join(dir, name)
	chained := hook + ChainedSuffix
	res := Installed{Name: name, Hook: hook}
	if exists(chained) {
		res.Chained = chained
	}
	f, err := readHook(hook, name)
	if err != nil {
		return res, err
	}
	if err := installRefusal(f, name); err != nil {
		return res, err
	}
	if f.kind == frameworkHook {
		// installRefusal let it through: strata's hook is NAME.legacy
		if f, err = readHook(hook+LegacySuffix, name); err != nil {
			return res, err
		}
		res.Hook, res.UnderFramework = f.path, true
	}
	want := ScriptFor(name, exe)
	switch f.kind {
	case strataHook:
		if bytes.Equal(f.content, want) {
			if st, err := os.Stat(f.path); err == nil && st.Mode().Perm()&0o111 == 0o111 {
				return res, nil
			}
		}
	}
	var okReal func(string) error
	if ok != nil {
		okReal = func(real string) error { return ok(dir, real) }
	}
	if err := atomicfile.MkdirAll(dir, 0o755, okReal); err != nil {
		var judged *outOfTreeError
		if errors.As(err, &judged) {
			return res, err
		}
		return res, fmt.Errorf("create hooks directory: %w", err)
	}
	if f.kind == foreignHook {
		if err := atomicfile.RenameIn(dir, name, name+ChainedSuffix, ok); err != nil {
			var judged *outOfTreeError
			if errors.As(err, &judged) {
				return res, err
			}
			return res, fmt.Errorf("chain the existing hook: %w", err)
		}
		res.Chained = chained
	}
	if err := writeExecutable(f.path, want, ok); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// installRefusal says why install may not write hook f (named name), or
// nil. Install only writes over a file exactly as strata wrote it, and
// only moves a hook it can chain safely.
func installRefusal(f hookFile, name string) error {
	switch f.kind {
	case noHook, strataHook:
		return nil
	case editedHook:
		return editedError(f.path, name, "rewritten")
	case frameworkHook:
		legacy, err := readHook(f.path+LegacySuffix, name)
		if err != nil {
			return err
		}
		switch legacy.kind {
		case editedHook:
			return editedError(legacy.path, name, "rewritten")
		case strataHook:
			// installed before the framework: it runs strata's hook as
			// NAME.legacy; unless strata's chains the framework's own
			// script, which runs NAME.legacy again
			chained, err := readHook(f.path+ChainedSuffix, name)
			if err != nil {
				return err
			}
			if chained.kind == frameworkHook {
				return fmt.Errorf("%s: the pre-commit framework's hook, which strata's hook (%s) runs, and which runs strata's again: each runs the other. strata hooks uninstall undoes this; then add strata to .pre-commit-config.yaml (hook id %s)", chained.path, filepath.Base(legacy.path), FrameworkHookID)
			}
			return nil
		}
		return fmt.Errorf("%s: the pre-commit framework's hook; chained by strata's, the two would run each other once pre-commit install runs again. Add strata to .pre-commit-config.yaml instead (hook id %s), or run pre-commit uninstall, strata hooks install, pre-commit install, in that order", f.path, FrameworkHookID)
	}
	chained := f.path + ChainedSuffix
	if nameBound(f.content) || nameBound(f.script) {
		return fmt.Errorf("%s: this hook reads its own file name or path ($0; husky's does, to find what to run), so moved to %s it could run nothing; leave it, and add this line to it, or to the script it runs (for husky, .husky/%s): strata hooks run %s", f.path, filepath.Base(chained), name, name)
	}
	if exists(chained) {
		return fmt.Errorf("%s: a hook is installed and %s already exists; move one of them away, then run strata hooks install again", f.path, filepath.Base(chained))
	}
	return nil
}

// editedError refuses to rewrite or remove strata's hook at path: it holds
// lines strata did not write, which would be lost.
func editedError(path, name, what string) error {
	return fmt.Errorf("%s: strata's %s hook, edited since strata wrote it; not %s, so nothing of yours is lost. Keep it as it is, or move your lines to a hook of your own (strata's runs %s first), delete this file and run this again", path, name, what, name+ChainedSuffix)
}

// FrameworkHookID is the id of strata's hook in the repository's
// .pre-commit-hooks.yaml, for the pre-commit framework's config: the
// check strata's own git hook runs (strata-validate, the other, checks
// files one by one and misses deletions: attack34b F2).
const FrameworkHookID = "strata-pre-commit"

// frameworkIDs mark a hook script as the pre-commit framework's: the
// hash its hook template carries (`# ID: …`), and the ones it carried
// before, which pre-commit itself still recognises as its own
// (CURRENT_HASH and PRIOR_HASHES in pre-commit's install_uninstall.py).
var frameworkIDs = []string{
	"138fd403232d2ddd5efb44317e38bf03",
	"4d9958c90bc262f47553e2c073f14cfe",
	"d8ee923c46731b42cd95cc869add4062",
	"49fd668cb42069aa1b6048464be5d395",
	"79f09a650522a87b0da915d0d983b2de",
	"e358c9dae00eac5d06b38dfdb1e33a8c",
}

// IsFramework reports whether a hook script is the pre-commit framework's
// (`pre-commit install` wrote it). That hook runs NAME.legacy itself, so
// strata never chains it: renamed, it would run strata's hook once
// `pre-commit install` moved that to NAME.legacy, and strata's would run
// it again.
func IsFramework(script []byte) bool {
	for _, id := range frameworkIDs {
		if bytes.Contains(script, []byte(id)) {
			return true
		}
	}
	return false
}

// selfNames are what a hook script reads its own file name or path with:
// sh's $0 (also "$0", ${0##*/}, case "$0"), bash's BASH_SOURCE, zsh's
// ZSH_ARGZERO, argv[0], Python's __file__, Node's __filename and
// process.argv, Ruby's __FILE__ and $PROGRAM_NAME; husky's hooks source a
// dispatcher that does.
var selfNames = []string{"husky", "$0", "${0", "BASH_SOURCE", "ZSH_ARGZERO", "argv[0]", "Args[0]",
	"__file__", "__filename", "process.argv", "__FILE__", "$PROGRAM_NAME"}

// nameBound reports whether a hook script may work out what to run from
// its own file name: renamed to NAME.strata-chained, such a hook can run
// nothing and let every commit through. strata cannot tell a dispatch on
// the name (`exec scripts/${0##*/}`, `case "$0" in *pre-commit)`) from a
// harmless use of the path (`. "$(dirname "$0")/lib.sh"`), so any use
// counts: install refuses and asks for one line instead, which is safe
// either way. (Chaining under the same name, in a directory of its own,
// would keep the name but change the directory that `dirname "$0"`
// finds, and sh has no `exec -a` to set $0 alone.)
func nameBound(script []byte) bool {
	for _, s := range selfNames {
		if bytes.Contains(script, []byte(s)) {
			return true
		}
	}
	return false
}

// hookKind says whose a hook file is.
type hookKind int

const (
	noHook        hookKind = iota
	strataHook             // exactly a script strata wrote, for any binary
	editedHook             // strata's marker, with lines strata did not write
	frameworkHook          // the pre-commit framework's (IsFramework)
	foreignHook            // any other, a symbolic link included
)

// hookFile is one hook file as install and uninstall find it.
type hookFile struct {
	path    string
	kind    hookKind
	content []byte // the file's bytes; a symbolic link's target; nil when none
	script  []byte // what runs: content, or the regular file a link names (nil when unreadable)
}

// maxScript bounds what is read of the file a hook's link names.
const maxScript = 1 << 20

// readHook reads the hook file at path for the hook name. A symbolic link
// is never strata's nor the framework's; its content is its target, and
// what it runs is read through it only when it names a regular file.
func readHook(path, name string) (hookFile, error) {
	f := hookFile{path: path}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return f, fmt.Errorf("read hook: %w", err)
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return f, fmt.Errorf("read hook: %w", err)
		}
		f.kind, f.content = foreignHook, []byte(target)
		f.script, _ = state.ReadRegular(path, maxScript, true)
		return f, nil
	case !st.Mode().IsRegular():
		return f, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("read hook: %w", err)
	}
	f.content, f.script = data, data
	switch {
	case written(name, data):
		f.kind = strataHook
	case bytes.Contains(data, []byte("\n"+marker(name)+":")):
		f.kind = editedHook
	case IsFramework(data):
		f.kind = frameworkHook
	default:
		f.kind = foreignHook
	}
	return f, nil
}

// scriptForms are the hook scripts strata has written, newest first: a
// file is strata's to rewrite or remove only when it is exactly one of
// them, for some binary. (A new form goes first here and the old ones
// stay: install rewrites an older one to ScriptFor's, uninstall removes
// it.)
var scriptForms = []func(name, exe string) []byte{ScriptFor, scriptDirname}

// written reports whether data is exactly a hook script strata wrote for
// the hook name, calling any binary.
func written(name string, data []byte) bool {
	const probe = "\x00"
	quoted := []byte(state.SingleQuoted(probe))
	for _, form := range scriptForms {
		tmpl := form(name, probe)
		i := bytes.Index(tmpl, quoted)
		if i < 0 {
			continue
		}
		prefix, suffix := tmpl[:i], tmpl[i+len(quoted):]
		if len(data) < len(prefix)+len(suffix)+2 || !bytes.HasPrefix(data, prefix) || !bytes.HasSuffix(data, suffix) {
			continue
		}
		q := string(data[len(prefix) : len(data)-len(suffix)])
		if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
			continue
		}
		exe := strings.ReplaceAll(q[1:len(q)-1], `'\''`, "'")
		if bytes.Equal(form(name, exe), data) {
			return true
		}
	}
	return false
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
	cmd := gitstore.Command(exec.Command("git", "config", "--show-scope", "--get", "core.hooksPath"), gitstore.GitName(root)) // as the user's git names it, through a link
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
	Hook     string // the file strata's hook was in: NAME, or NAME.legacy under the pre-commit framework
	Restored bool   // the chained hook was moved back to Hook
	Changed  bool   // false when strata's hook was not installed
	// Dropped: NAME.strata-chained was a copy of the pre-commit framework's
	// hook, the same bytes as NAME, and was deleted: put back as
	// NAME.legacy, the framework's hook would run itself
	Dropped string
	// Left: NAME.strata-chained is an older pre-commit framework hook,
	// different from NAME, left where it is for the same reason
	Left string
}

// Uninstall removes strata's hooks (Hooks) and reports each
// (UninstallHook). It looks at all of them before it changes any: when one
// is refused, nothing is removed.
func Uninstall(root string) ([]Removed, error) {
	dir, err := Dir(root)
	if err != nil {
		return nil, err
	}
	for _, name := range Hooks {
		if err := uninstallRefusal(root, dir, name); err != nil {
			return nil, err
		}
	}
	var out []Removed
	for _, name := range Hooks {
		res, err := uninstallHook(dir, name)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// UninstallHook removes strata's hook name and moves the hook it chained
// back in its place, exactly as it was. A hook that is not strata's is left
// alone, and so is one strata wrote that has been edited since (an error:
// the edits would be lost), or one in a file git tracks (an error: the
// repository's file). It is idempotent.
func UninstallHook(root, name string) (Removed, error) {
	dir, err := Dir(root)
	if err != nil {
		return Removed{}, err
	}
	if err := uninstallRefusal(root, dir, name); err != nil {
		return Removed{Name: name, Hook: filepath.Join(dir, name)}, err
	}
	return uninstallHook(dir, name)
}

// uninstallRefusal refuses to remove strata's hook name when it has been
// edited, at NAME or under another tool's hook as NAME.legacy, or when git
// tracks its file (Tracked).
func uninstallRefusal(root, dir, name string) error {
	f, err := readHook(filepath.Join(dir, name), name)
	if err != nil {
		return err
	}
	if f.kind == frameworkHook || f.kind == foreignHook {
		if f, err = readHook(f.path+LegacySuffix, name); err != nil {
			return err
		}
	}
	if f.kind == editedHook {
		return editedError(f.path, name, "removed")
	}
	if f.kind == noHook {
		return staleChained(f.path+ChainedSuffix, name)
	}
	if f.kind == strataHook {
		tracked, err := Tracked(root, f.path)
		if err != nil {
			return err
		}
		if tracked {
			return trackedStrataError(f.path, name)
		}
	}
	return nil
}

// staleChained refuses to move NAME.strata-chained back to NAME when there
// is no strata hook at NAME (a chained hook left behind: strata's hook was
// deleted by hand, or the file was put there by something else) and it is
// not a regular file: a symbolic link, a named pipe or a directory there
// may be anything, and as NAME git would run it (or fail on every
// commit). A regular file is the hook strata chained, moved back as it is.
func staleChained(chained, name string) error {
	st, err := os.Lstat(chained)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("read hook: %w", err)
	case st.Mode().IsRegular():
		return nil
	}
	what := "not a regular file"
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case st.IsDir():
		what = "a directory"
	case st.Mode()&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	}
	return fmt.Errorf("%s: %s, and no strata %s hook to remove; left where it is (uninstall moves back only a regular file). Move it to %s yourself if it is your hook, or delete it", chained, what, name, name)
}

func uninstallHook(dir, name string) (Removed, error) {
	hook := filepath.Join(dir, name)
	chained := hook + ChainedSuffix
	res := Removed{Name: name, Hook: hook}
	f, err := readHook(hook, name)
	switch {
	case err != nil:
		return res, err
	case f.kind == frameworkHook || f.kind == foreignHook:
		return uninstallLegacy(f, name, chained, res)
	case f.kind == strataHook:
		if err := os.Remove(hook); err != nil {
			return res, fmt.Errorf("remove hook: %w", err)
		}
		res.Changed = true
	case f.kind == editedHook:
		return res, editedError(hook, name, "removed")
	case f.kind == noHook:
		if err := staleChained(chained, name); err != nil {
			return res, err
		}
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

// uninstallLegacy handles a foreign hook f at the hook's place: when it is
// the pre-commit framework's (or another that runs NAME.legacy so),
// installed after strata's, strata's hook now runs as NAME.legacy. It is
// removed there, and the hook strata chained takes its place, so the
// framework runs what it ran before strata came. Never a copy of the
// framework's own hook: as NAME.legacy it would run itself without end
// (pre-commit's refuses to: "installed in migration mode"). A copy with
// the same bytes as f is deleted; an older one is left where it is.
// Without strata's hook as NAME.legacy, strata's is not installed.
func uninstallLegacy(f hookFile, name, chained string, res Removed) (Removed, error) {
	legacy, err := readHook(f.path+LegacySuffix, name)
	switch {
	case err != nil:
		return res, err
	case legacy.kind == editedHook:
		return res, editedError(legacy.path, name, "removed")
	case legacy.kind != strataHook:
		return res, nil
	}
	if err := os.Remove(legacy.path); err != nil {
		return res, fmt.Errorf("remove hook: %w", err)
	}
	res.Hook, res.Changed = legacy.path, true
	if !exists(chained) {
		return res, nil
	}
	c, err := readHook(chained, name)
	if err != nil {
		return res, err
	}
	if c.kind == frameworkHook {
		if f.kind != frameworkHook || !bytes.Equal(c.content, f.content) {
			res.Left = chained
			return res, nil
		}
		if err := os.Remove(chained); err != nil {
			return res, fmt.Errorf("remove the framework's copy: %w", err)
		}
		res.Dropped = chained
		return res, nil
	}
	if err := os.Rename(chained, legacy.path); err != nil {
		return res, fmt.Errorf("restore the chained hook: %w", err)
	}
	res.Restored = true
	return res, nil
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// writeExecutable replaces name atomically with an executable file,
// through its directory opened and judged by ok (when not nil).
func writeExecutable(name string, data []byte, ok func(dir, real string) error) error {
	b := atomicfile.Batch{DirOK: ok}
	err := b.Add(name, data, 0o777&^atomicfile.Umask()) // as git gives its hooks: 0755 under umask 022, 0700 under 077 (attack36d L3)
	var notWritten []string
	if err == nil {
		notWritten, err = b.Commit(nil)
	}
	if err == nil && len(notWritten) > 0 {
		// refused by ok at Commit, or its path names another folder now
		err = fmt.Errorf("%s: the hooks directory was replaced or moved while strata wrote in it; nothing written there", filepath.Dir(name))
	}
	if err != nil {
		b.Abort()
		var judged *outOfTreeError
		if errors.As(err, &judged) {
			return err
		}
		return fmt.Errorf("write hook: %w", err)
	}
	return nil
}

// outOfTreeError refuses a hooks directory that core.hooksPath names in
// the work tree but that is really outside it, through the symbolic link
// Link (a path as core.hooksPath gives it) to Target.
// Real is where Target really is ("" when it leads nowhere, or is
// Target).
type outOfTreeError struct {
	Dir, Link, Target, Real string
}

func (e *outOfTreeError) Error() string {
	to := e.Target
	if e.Real != "" && e.Real != e.Target {
		to += " (" + e.Real + ")"
	}
	via := "names it"
	if e.Dir != e.Link {
		via = "names " + e.Dir + " through it"
	}
	return fmt.Sprintf("%s: a symbolic link to %s, outside the work tree; core.hooksPath %s, so strata's hooks would be written there. Nothing installed: point core.hooksPath at a folder in the work tree (or unset it) and run this again", e.Link, to, via)
}

// staysInTree judges a hooks directory core.hooksPath names that is, or
// passes through, the work tree at root: such a folder may come from the
// repository itself (a committed .githooks), and a committed symbolic link
// on the way could lead anywhere (~/.local/bin), so it must really be in
// the work tree, or in the git directory's hooks/. Whether a path is in
// the work tree is decided from real paths, never from the value's text:
// it walks dir from the file system's root as the system resolves it, one
// folder and one link at a time (an absolute value may reach the work tree
// through a link to it, ~/src -> /data/src, or leave it through one), and
// refuses (outOfTreeError) at the first symbolic link in the work tree
// that leads out of it, or that leads nowhere. A folder not (yet) there is
// made below one that is. A link below the work tree's .git (or .git
// itself) is git's own, never checked out, and not judged, nor is a folder
// the walk never reaches in the work tree (the user's own choice, in the
// repository's configuration, see notShared). It returns the check again
// for the writes (nil when none applies), judging where the directory
// written in really is then.
func staysInTree(root, dir string) (func(dir, real string) error, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("read work tree: %w", err)
	}
	// the git directory and its hooks/, really; asked once, when needed
	var gitDir, gitHooks *string
	inside := func(real string) bool {
		if gitHooks == nil {
			g, h := "", ""
			if common, err := gitCommonDir(root); err == nil {
				if r, err := filepath.EvalSymlinks(common); err == nil {
					g = r
				}
				if r, err := filepath.EvalSymlinks(filepath.Join(common, "hooks")); err == nil {
					h = r
				}
			}
			gitDir, gitHooks = &g, &h
		}
		if *gitHooks != "" && within(*gitHooks, real) {
			return true
		}
		// a link into the git directory anywhere but hooks/ (.githooks ->
		// .git, -> .git/objects) is not the work tree, though under its root
		if *gitDir != "" && within(*gitDir, real) {
			return false
		}
		return within(realRoot, real)
	}
	shown := func(p string) string {
		for _, base := range []string{root, realRoot} {
			if within(base, p) {
				if r, err := filepath.Rel(base, p); err == nil {
					return filepath.ToSlash(r)
				}
			}
		}
		return p
	}
	w := &treeWalk{realRoot: realRoot, inside: inside, dir: shown(dir), shown: shown}
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	real, err := w.resolve("", abs, abs)
	if err != nil && !errors.Is(err, errMissing) {
		return nil, err
	}
	if !w.judged && !w.inTree(real) {
		return nil, nil
	}
	return func(d, real string) error {
		if inside(real) {
			return nil
		}
		return &outOfTreeError{Dir: shown(dir), Link: shown(d), Target: real}
	}, nil
}

// errMissing: the walk reached a name that does not exist.
var errMissing = errors.New("does not exist")

// treeWalk resolves a hooks directory's path as the system does, judging
// each symbolic link met in the work tree (staysInTree).
type treeWalk struct {
	realRoot string
	inside   func(real string) bool // the work tree or the git directory's hooks/
	dir      string                 // the hooks directory, as shown
	shown    func(string) string
	hops     int  // links followed, at most 255 as the system allows
	judged   bool // a link in the work tree was followed
}

// inTree reports whether the real path p is in the work tree, not below
// its .git.
func (w *treeWalk) inTree(p string) bool {
	if p == "" || !within(w.realRoot, p) {
		return false
	}
	rel, err := filepath.Rel(w.realRoot, p)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return !strings.EqualFold(first, ".git")
}

// resolve follows path (absolute, or relative to the real folder base)
// and returns its real path; with errMissing, the real path of the part
// that exists. text, when not "", is path as core.hooksPath gives it,
// named in a refusal.
func (w *treeWalk) resolve(base, path, text string) (string, error) {
	cur := base
	if filepath.IsAbs(path) {
		vol := filepath.VolumeName(path)
		cur, path = vol+string(filepath.Separator), path[len(vol):]
	}
	shownAt := text
	if text != "" {
		vol := filepath.VolumeName(text)
		shownAt = vol + string(filepath.Separator)
	}
	for _, c := range strings.Split(filepath.ToSlash(path), "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur is real: its parent is the system's ..
			if text != "" {
				shownAt = filepath.Dir(shownAt)
			}
			continue
		}
		next := filepath.Join(cur, c)
		label := next
		if text != "" {
			shownAt = filepath.Join(shownAt, c)
			label = shownAt
		}
		st, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return cur, errMissing // made by install, below a folder judged already
		}
		if err != nil {
			return "", fmt.Errorf("read hooks directory: %w", err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if w.hops++; w.hops > 255 {
			return "", fmt.Errorf("read hooks directory: %s: too many symbolic links", label)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("read hooks directory: %w", err)
		}
		real, err := w.resolve(cur, target, "")
		if !w.inTree(next) {
			if err != nil {
				return real, err
			}
			cur = real
			continue
		}
		w.judged = true
		switch {
		case errors.Is(err, errMissing):
			return "", &outOfTreeError{Dir: w.dir, Link: w.shown(label), Target: target + ", which does not exist"}
		case err != nil:
			return "", err
		case !w.inside(real):
			return "", &outOfTreeError{Dir: w.dir, Link: w.shown(label), Target: target, Real: real}
		}
		cur = real
	}
	return cur, nil
}

// within reports whether path is dir or below it (both clean, absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// gitCommonDir is the common git directory of the work tree at root
// (shared by its linked worktrees), absolute.
func gitCommonDir(root string) (string, error) {
	cmd := gitstore.Command(exec.Command("git", "rev-parse", "--git-common-dir"), gitstore.GitName(root)) // as the user's git names it, through a link
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	d := strings.TrimRight(string(out), "\r\n")
	if !filepath.IsAbs(d) {
		d = filepath.Join(root, d)
	}
	return d, nil
}
