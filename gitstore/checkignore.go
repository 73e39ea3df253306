package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// CheckIgnore asks git itself which of the repo-relative paths it ignores:
// one `git check-ignore --stdin -z` in the work tree, so every source of
// git's rules counts exactly as git counts it (core.ignorecase,
// core.excludesFile set through [include]/[includeIf] or $GIT_CONFIG_GLOBAL,
// `-c` and GIT_CONFIG_* settings), and a file git tracks is never ignored.
// Ignores answers the same question in-process for the commands that must
// start fast; sync asks git before it publishes anything (engine.Unpublishable).
//
// A path git refuses to consider (one whose folder on disk is a symbolic
// link: "beyond a symbolic link") is not given to git and is answered by
// Ignores instead. A store with no work tree ignores nothing. It returns an
// error only when git cannot be run or fails.
func (s *Store) CheckIgnore(ctx context.Context, paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	if s.root == "" || len(paths) == 0 {
		return out, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("sync needs the git binary on PATH")
	}
	var in bytes.Buffer
	var ig *Ignores
	linked := map[string]bool{}    // by folder: whether it, or one above it, is a symlink
	var realRoot string            // the work tree's real path, once a path needs it
	asked := map[string][]string{} // the name git is asked about -> the paths it answers for
	ask := func(name, p string) {
		if _, dup := asked[name]; !dup {
			if name[0] == ':' { // a name, not pathspec magic (":(exclude)x" made git fail the whole check)
				in.WriteString("./")
			}
			in.WriteString(name)
			in.WriteByte(0)
		}
		asked[name] = append(asked[name], p)
	}
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			continue
		}
		if !s.beyondSymlink(p, linked) {
			ask(p, p)
			continue
		}
		// git will not judge a path beyond a symbolic link: strata's own
		// rules judge it, and git judges the file where it really is, when
		// that is in the work tree (".claude -> private" with private/
		// ignored: the file is private, whichever name it is reached by).
		if ig == nil {
			ig = s.Ignores()
		}
		if ig.Ignored(p) {
			out[p] = true
		}
		if realRoot == "" {
			realRoot, _ = filepath.EvalSymlinks(s.root) // once, for every such path
		}
		if real, ok := s.realRel(realRoot, p); ok {
			ask(real, p)
		}
	}
	if in.Len() == 0 {
		return out, nil
	}
	ctx, cancel := askDeadline(ctx)
	defer cancel()
	cmd := s.gitCmd(exec.CommandContext(ctx, "git", "check-ignore", "--stdin", "-z"))
	cmd.Stdin = &in
	boundWait(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // git answered; a process it started holds the pipes
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		err = nil // git's answer: none of them is ignored
	}
	if err != nil {
		return nil, askFailed(ctx, "check-ignore", stderr.String(), err)
	}
	for _, name := range strings.Split(stdout.String(), "\x00") {
		if rest, ok := strings.CutPrefix(name, "./:"); ok {
			name = ":" + rest
		}
		for _, p := range asked[name] {
			out[p] = true
		}
	}
	return out, nil
}

// realRel is the repo-relative path where p really is, its folders'
// symbolic links resolved, when that is inside the work tree whose real
// path is root.
func (s *Store) realRel(root, p string) (string, bool) {
	if root == "" {
		return "", false
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(s.root, filepath.FromSlash(path.Dir(p))))
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, filepath.Join(dir, path.Base(p)))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// beyondSymlink reports whether a folder of the repo-relative path p is a
// symbolic link in the work tree, caching each folder's answer in linked.
func (s *Store) beyondSymlink(p string, linked map[string]bool) bool {
	dir := ""
	for _, seg := range strings.Split(p, "/")[:strings.Count(p, "/")] {
		if dir == "" {
			dir = seg
		} else {
			dir += "/" + seg
		}
		l, ok := linked[dir]
		if !ok {
			fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(dir)))
			l = err == nil && fi.Mode()&os.ModeSymlink != 0
			linked[dir] = l
		}
		if l {
			return true
		}
	}
	return false
}

// AskTimeout bounds each question sync asks git about the paths it would
// publish (check-ignore, check-attr, ls-files): a named pipe among git's
// ignore or attribute files (.gitignore, .git/info/exclude) blocks git on
// it for ever, as it blocks git's own commands, and the sync then hung,
// the watcher's periodic one silently (attack40e H2). A variable, so that
// tests can shorten it.
var AskTimeout = 2 * time.Minute

// askDeadline is ctx bounded by AskTimeout.
func askDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, AskTimeout)
}

// askFailed is the error of a question to git (git ARGS) that failed:
// past AskTimeout it says so, and what may block git.
func askFailed(ctx context.Context, args, stderr string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("git %s gave no answer within %s: something git reads blocks it (a named pipe at a .gitignore, .gitattributes or .git/info/exclude?); nothing was pushed", args, AskTimeout)
	}
	return &gitError{args: []string{args}, stderr: stderr, err: err}
}
