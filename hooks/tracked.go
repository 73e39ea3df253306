package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/strata-dev/strata/gitstore"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tracked reports whether git tracks the hook file at path (a file of
// the hooks directory Dir gives for the work tree at root): the index or
// HEAD's commit of the repository whose work tree holds it — the work
// tree at root, or a submodule of it, or another repository a local
// core.hooksPath names — holds it. Such a hook is a repository's own,
// committed by the team (core.hooksPath .githooks, or a hooks submodule):
// strata's hook in its place would reach every clone with the next `git
// commit -a`, calling this machine's binary and chaining a file no clone
// has, so the team's hook would stop running everywhere else (attack35b
// M2, attack35c M2). A file in no work tree, or in a git directory, is
// never tracked. The folder is judged where it really is (a link to a
// folder), the file itself as named (a tracked symbolic link is tracked).
// It needs the git binary.
func Tracked(root, path string) (bool, error) {
	dir, rest, ok := existing(path)
	if !ok {
		return false, nil
	}
	top, err := gitIn(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		// in no work tree (a folder of its own, or a git directory)
		return false, nil
	}
	top = strings.TrimRight(top, "\n")
	if top == "" {
		return false, nil
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return false, nil
	}
	full := filepath.Join(dir, rest)
	rel, err := filepath.Rel(realTop, full)
	if err != nil || !within(realTop, full) || rel == "." {
		return false, nil
	}
	rel = filepath.ToSlash(rel)
	if first, _, _ := strings.Cut(rel, "/"); strings.EqualFold(first, ".git") {
		return false, nil
	}
	if out, err := gitIn(realTop, "--literal-pathspecs", "ls-files", "-z", "--", rel); err != nil {
		return false, err
	} else if out != "" {
		return true, nil
	}
	if _, err := gitIn(realTop, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err != nil {
		return false, nil // no commit yet: the index answered
	}
	out, err := gitIn(realTop, "--literal-pathspecs", "ls-tree", "-z", "--name-only", "HEAD", "--", rel)
	if err != nil {
		return false, err
	}
	return out != "", nil
}

// existing splits path into its deepest folder that exists, taken where it
// really is (links followed), and the rest below it; ok is false when no
// part of it can be read.
func existing(path string) (dir, rest string, ok bool) {
	dir, rest = filepath.Dir(path), filepath.Base(path)
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return real, rest, true
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return "", "", false // unreadable: install's own reads say why
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
}

// gitIn runs git with args in dir, the repository git finds from there:
// none of the environment that names another (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE…, as a hook git runs sets them) is passed on.
func gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = []string{} // not nil: Command would take this process's
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); k == "GIT_DIR" || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE" ||
			k == "GIT_COMMON_DIR" || k == "GIT_OBJECT_DIRECTORY" || k == "GIT_ALTERNATE_OBJECT_DIRECTORIES" || k == "GIT_PREFIX" {
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	gitstore.Command(cmd, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// trackedError refuses to write strata's hook over a hook file git tracks
// (Tracked), saying what to do instead: add the one line that runs
// strata's check to that hook, in a commit, as for husky's hooks and a
// shared hooks directory.
func trackedError(path, name string) error {
	return fmt.Errorf("%s: a hook file git tracks (the repository's own); nothing installed: strata's hook in its place would reach every clone with the next commit, calling this machine's binary, and the hook moved aside would run nowhere else. Leave it, and add this line to it in a commit: strata hooks run %s", path, name)
}

// trackedStrataError refuses to remove strata's hook from a file git
// tracks: committed by an older strata's install, it is the repository's
// file now, and what takes its place is for a commit to say.
func trackedStrataError(path, name string) error {
	return fmt.Errorf("%s: strata's %s hook, in a file git tracks (the repository's own); not removed, since that would change the file for every clone with the next commit. Put the repository's hook back in a commit of your own (git log -- %s finds it), with this line in it: strata hooks run %s", path, name, path, name)
}
