package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/internal/proc"
)

// Amending reports whether the commit the running hook is checking
// replaces HEAD: whether the nearest git process above this one (git
// runs its hooks through a shell, the pre-commit framework through one
// more) is `git commit --amend`. git tells its pre-commit hook nothing
// else of an amend: no variable, no file. A git reached through an alias
// shows the expanded command (`git commit --amend`), since git runs a
// builtin alias as a new git process. Where the processes cannot be read
// (no /proc), it reports false, and the hook judges against HEAD.
func Amending() bool {
	argv := nearestGit()
	return argv != nil && commitAmends(argv)
}

// commitAmends reports whether argv, a git command line, is `git commit`
// with --amend (or a prefix of it git accepts: --am, --ame, --amen).
// git's global options and commit's options taking a value are skipped,
// so a message "--amend" is not taken for the option.
func commitAmends(argv []string) bool {
	i := 1
	for ; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		switch argv[i] {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			i++ // its value follows
		}
	}
	if i >= len(argv) || argv[i] != "commit" {
		return false
	}
	for i++; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return false
		case strings.HasPrefix(a, "--"):
			name, _, hasVal := strings.Cut(a, "=")
			if len(name) >= 4 && strings.HasPrefix("--amend", name) {
				return true
			}
			if !hasVal && valued(name) {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// bundled short options: the first taking a value takes the
			// rest of the word, or the next word when it is last
			if j := strings.IndexAny(a[1:], "mFCct"); j == len(a)-2 {
				i++
			}
		}
	}
	return false
}

// valued reports whether name, a long option of git commit as given (git
// takes any unambiguous beginning of one: --mess is --message), takes its
// value as the next word when none is attached with "=".
func valued(name string) bool {
	if len(name) < 3 {
		return false
	}
	for _, v := range []string{"--message", "--file", "--reuse-message", "--reedit-message", "--template",
		"--author", "--date", "--cleanup", "--fixup", "--squash", "--trailer", "--pathspec-from-file"} {
		if strings.HasPrefix(v, name) {
			return true
		}
	}
	return false
}

// nearestGit returns the command line of the nearest git process above
// this one (at most 8 generations up), nil when none is found or the
// processes cannot be read (no /proc).
func nearestGit() []string {
	pid := os.Getppid()
	for n := 0; n < 8 && pid > 1; n++ {
		argv := proc.Args(pid)
		if argv == nil {
			return nil
		}
		if isGit(argv) {
			return argv
		}
		pid = proc.Parent(pid)
	}
	return nil
}

// isGit reports whether argv[0] names the git binary.
func isGit(argv []string) bool {
	return len(argv) > 0 && filepath.Base(argv[0]) == "git"
}

// HeadParents returns the parents of the commit HEAD names: the parents
// of a commit that replaces HEAD (Amending). None for a root commit.
func (s *Store) HeadParents() ([]string, error) {
	c, err := s.resolve("HEAD")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ci, err := s.readCommit(c)
	if err != nil {
		return nil, fmt.Errorf("HEAD: %w", err)
	}
	out := make([]string, len(ci.parents))
	for i, p := range ci.parents {
		out[i] = p.String()
	}
	return out, nil
}
