package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A repository reached through a symbolic link (~/src -> /data/src, /tmp
// -> /private/tmp on macOS) has two names for its git dir, and git matches
// an [includeIf "gitdir:…"] condition against both (config.c
// include_by_gitdir): the real path, then the path as git found it, made
// absolute from $PWD when $PWD names the current directory. strata finds
// the repository by its real path (Open), so it keeps the other name
// beside it: the config reader matches both (configReader.met), and the
// git processes it runs are pointed at the repository by that name
// (Store.gitCmd), or git there would miss the include the user's own git
// reads, and `git check-ignore` would pass a file the user's git ignores.

// linkedTop is the top of the work tree top (its links resolved) and its
// .git directory as the user's path names them: given is the directory
// strata was pointed at as named (filepath.Abs: $PWD-based), real the same
// resolved, inside top. Both are "" when given names top by its real path,
// or when walking up from given does not come to top. git names the .git
// directory so only when run at the top itself (from a subfolder it takes
// the real path); strata takes it from any folder, so that a file is as
// private in a subfolder as git at the top says.
func linkedTop(given, real, top string) (linkRoot, linkGit string) {
	rel, err := filepath.Rel(top, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", ""
	}
	d := given
	if rel != "." {
		for range strings.Split(rel, string(filepath.Separator)) {
			d = filepath.Dir(d)
		}
	}
	if d == top || !sameDir(d, top) {
		return "", ""
	}
	return d, filepath.Join(d, ".git")
}

// linkedGitDir is $GIT_DIR (env) as git names it, made absolute from given
// (the directory strata was pointed at, as named), when that differs from
// gitDir (its real path) and is the same directory; else "". A $GIT_DIR
// naming a .git file is none: git takes the real path of the directory the
// file names.
func linkedGitDir(given, env, gitDir string) string {
	p := env
	if !filepath.IsAbs(p) {
		p = filepath.Join(given, p)
	}
	p = filepath.Clean(p)
	if p == gitDir || !sameDir(p, gitDir) {
		return ""
	}
	return p
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil || !fa.IsDir() {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// gitCmd points cmd, a git process to run in the work tree, at the
// repository as the user's git finds it: in the work tree as the user's
// path names it, with $PWD saying so (git takes the git dir's name from
// $PWD when it names the current directory), else in the work tree; and
// makes it one of strata's git processes (Command).
func (s *Store) gitCmd(cmd *exec.Cmd) *exec.Cmd {
	dir := s.root
	if s.linkRoot != "" {
		dir = s.linkRoot
	}
	return Command(cmd, dir)
}

// noGrafts is the graft file strata's git processes read: a path that can
// never exist (/dev/null is no folder), so git reads no grafts. An empty
// file that exists (/dev/null itself) has git print its deprecation
// hint for grafts at every command that reads a commit, and the first
// line of git's stderr is what strata's error messages quote.
const noGrafts = "/dev/null/no-grafts"

// Command readies cmd, a git process strata starts to read or move a
// repository, to run in dir ($PWD naming it, as os/exec sets it only for
// an inherited environment), its environment cmd.Env (nil: this
// process's), with two settings that keep git's answers the ones strata's
// own reading of the repository and git push give (dir "": this
// process's directory):
//   - GIT_NO_REPLACE_OBJECTS, and GIT_GRAFT_FILE naming no file (noGrafts):
//     strata reads objects itself and git push sends the real ones, so a
//     rev-list that followed a refs/replace/ graft (or .git/info/grafts)
//     skipped commits the push then sent (sync's check of private
//     versions passed over one; forget rewrote another view of the
//     history than the one it read: attack37 M1, attack37d M2);
//   - core.fsmonitor off: a program the repository's config names is never
//     run by strata; nothing strata asks git needs it (attack37 L4).
//
// Every git process of this package and of those that run git on a
// repository (doctor, hooks) is made through it.
func Command(cmd *exec.Cmd, dir string) *exec.Cmd {
	cmd.Dir = dir
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE="+noGrafts)
	if dir != "" {
		cmd.Env = append(cmd.Env, "PWD="+dir)
	}
	cmd.Args = append([]string{cmd.Args[0], "-c", "core.fsmonitor=false"}, cmd.Args[1:]...)
	return cmd
}

// GitName is the name under which git, run by the user here, finds the
// work tree root: the name the current directory reaches it by through a
// symbolic link ($PWD), as Open keeps it (linkedTop), else root. A git
// process strata starts for root outside the store (the hooks, doctor)
// runs there, so that git reads the [includeIf "gitdir:…"] blocks the
// user's git reads (a core.hooksPath one: strata's hook went into
// .git/hooks, where git never ran it).
func GitName(root string) string {
	given, err := filepath.Abs(".")
	if err != nil {
		return root
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return root
	}
	if linkRoot, _ := linkedTop(given, real, root); linkRoot != "" {
		return linkRoot
	}
	return root
}
