package gitstore

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
)

// CheckTracked asks git itself which of the repo-relative paths it tracks
// (the index holds them), path -> the local-changes flag of its entry
// (SkipWorktree, AssumeUnchanged; "" for none): `git --literal-pathspecs
// ls-files -v -z` in the work tree over the paths, so an index the in-process reader (Ignores.Tracked)
// reads differently cannot let an untracked file out. A path with a
// symbolic link among its folders counts as tracked also when git tracks
// the file where it really is, in the work tree (git shares that file
// already). The paths go to git as arguments, in as few runs as the
// command line allows (one for any usual number). A store with no work tree
// tracks nothing. It returns an error only when git cannot be run or fails.
func (s *Store) CheckTracked(ctx context.Context, paths []string) (map[string]string, error) {
	out := map[string]string{}
	if s.root == "" || len(paths) == 0 {
		return out, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("sync needs the git binary on PATH")
	}
	names, asked := s.askedNames(paths)
	for len(names) > 0 {
		// at most ~100 KB of names a run: far below any system's limit on
		// a command line
		n, size := 0, 0
		for n < len(names) && (n == 0 || size+len(names[n]) < 100<<10) {
			size += len(names[n]) + 1
			n++
		}
		args := append([]string{"--literal-pathspecs", "ls-files", "-v", "-z", "--"}, names[:n]...)
		names = names[n:]
		actx, cancel := askDeadline(ctx)
		cmd := s.gitCmd(exec.CommandContext(actx, "git", args...))
		boundWait(cmd)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			return nil, askFailed(actx, "ls-files", stderr.String(), err)
		}
		for _, rec := range strings.Split(stdout.String(), "\x00") {
			name, hidden, ok := lsFilesTag(rec)
			if !ok {
				continue
			}
			for _, p := range asked[name] {
				if was, seen := out[p]; !seen || was == "" {
					out[p] = hidden // as named, or where a linked folder leads: either flag counts
				}
			}
		}
	}
	return out, nil
}

// InHistory reports whether a commit HEAD reaches holds blob at path: a
// version the user committed (`git log -1 --find-object=BLOB HEAD --
// PATH`). Asked only where a version sync once refused as private would
// otherwise stay refused; an error (no HEAD yet) answers false.
func (s *Store) InHistory(ctx context.Context, path, blob string) bool {
	out, err := s.git(ctx, nil, "--literal-pathspecs", "log", "-1", "--format=%H", "--find-object="+blob, "HEAD", "--", path)
	return err == nil && out != ""
}
