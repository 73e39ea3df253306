package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/gitstore"
)

// Tracked reports whether git tracks the hook file at path (a file of
// the hooks directory Dir gives for the work tree at root): the index or
// HEAD's commit holds it. Such a hook is the repository's own, committed
// by the team (core.hooksPath .githooks): strata's hook in its place would
// reach every clone with the next `git commit -a`, calling this machine's
// binary and chaining a file no clone has, so the team's hook would stop
// running everywhere else (attack35b M2). A file outside the work tree, or
// in its .git, is never tracked. The folder is judged where it really is
// (a link to a folder of the work tree), the file itself as named (a
// tracked symbolic link is tracked). It needs the git binary.
func Tracked(root, path string) (bool, error) {
	rel, ok, err := inWorkTree(root, path)
	if err != nil || !ok {
		return false, err
	}
	if out, err := gitOutput(root, "--literal-pathspecs", "ls-files", "-z", "--", rel); err != nil {
		return false, err
	} else if out != "" {
		return true, nil
	}
	if _, err := gitOutput(root, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err != nil {
		return false, nil // no commit yet: the index answered
	}
	out, err := gitOutput(root, "--literal-pathspecs", "ls-tree", "-z", "--name-only", "HEAD", "--", rel)
	if err != nil {
		return false, err
	}
	return out != "", nil
}

// inWorkTree returns path relative to the work tree's top, slash-separated,
// and whether it is in the work tree and not below its .git. Its folder is
// taken where it really is; a folder not there yet is judged by the part
// of it that is.
func inWorkTree(root, path string) (string, bool, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false, fmt.Errorf("read work tree: %w", err)
	}
	dir, rest := filepath.Dir(path), filepath.Base(path)
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			dir = real
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return "", false, nil // unreadable: install's own reads say why
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
	full := filepath.Join(dir, rest)
	if !within(realRoot, full) {
		return "", false, nil
	}
	rel, err := filepath.Rel(realRoot, full)
	if err != nil {
		return "", false, nil
	}
	rel = filepath.ToSlash(rel)
	if first, _, _ := strings.Cut(rel, "/"); strings.EqualFold(first, ".git") || rel == "." {
		return "", false, nil
	}
	return rel, true, nil
}

// gitOutput runs git with args at the work tree's top and returns what it
// printed; an error names git's own message.
func gitOutput(root string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = gitstore.GitName(root) // as the user's git names it, through a link
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
