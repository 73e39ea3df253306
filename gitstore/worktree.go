package gitstore

import (
	"io"
	"os"
	"path/filepath"
)

// workTreeSettings is what git reads of a git directory's own
// configuration to set up its work tree (check_repository_format in git's
// setup.c): core.worktree and core.bare of the common directory's config,
// read without its includes, as git reads them there. In a linked
// worktree (gitDir other than commonDir) git ignores both, unless
// extensions.worktreeConfig is true: then the worktree's config.worktree
// is read after the common config and both count. worktree is "" when
// none is named; bare reports core.bare true.
//
// The values come from the repository's local config, which git trusts
// (it is not part of the repository's content, and a clone never carries
// it): strata takes them as git does.
func workTreeSettings(gitDir, commonDir string) (worktree string, bare bool) {
	perWorktree := false
	take := func(sec, sub, key, val string, hasVal bool) {
		switch {
		case sec == "core" && sub == "" && key == "worktree" && hasVal:
			worktree = val
		case sec == "core" && sub == "" && key == "bare":
			bare, _ = gitBool(val, hasVal) // one git refuses: checkFormat refuses it
		case sec == "extensions" && sub == "" && key == "worktreeconfig":
			perWorktree, _ = gitBool(val, hasVal)
		}
	}
	if data, err := readConfigFile(filepath.Join(commonDir, "config")); err == nil {
		parseConfig(string(data), take)
	}
	if perWorktree {
		if data, err := readConfigFile(filepath.Join(gitDir, "config.worktree")); err == nil {
			parseConfig(string(data), take)
		}
	} else if gitDir != commonDir {
		return "", false
	}
	return worktree, bare
}

// worktreeConfigOn reports whether the common directory's config sets
// extensions.worktreeConfig true (read without its includes, as git's
// check_repository_format reads it): git then reads each worktree's
// config.worktree after the repository's config.
func worktreeConfigOn(commonDir string) bool {
	on := false
	if data, err := readConfigFile(filepath.Join(commonDir, "config")); err == nil {
		parseConfig(string(data), func(sec, sub, key, val string, hasVal bool) {
			if sec == "extensions" && sub == "" && key == "worktreeconfig" {
				on, _ = gitBool(val, hasVal)
			}
		})
	}
	return on
}

// readConfigFile reads a config file of the git directory, at most 1 MiB
// (as checkFormat).
func readConfigFile(name string) ([]byte, error) {
	f, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// setWorkTree is the work tree of the git directory gitDir, found by
// discovery at top (the directory holding .git) or named by $GIT_DIR (top
// is then the current directory), as git's setup_explicit_git_dir takes
// it: $GIT_WORK_TREE (from dir, the current directory), else none when
// core.bare is true (a bareError, also when core.worktree is set: git
// warns "core.bare and core.worktree do not make sense" and runs without a
// work tree), else core.worktree (from the git directory), else top.
func setWorkTree(dir, top, gitDir, commonDir string) (root string, err error) {
	worktree, bare := workTreeSettings(gitDir, commonDir)
	switch {
	case os.Getenv("GIT_WORK_TREE") != "":
		return fromDir(dir, os.Getenv("GIT_WORK_TREE")), nil
	case bare && worktree != "":
		return "", &bareError{dir: gitDir, worktree: worktree}
	case bare:
		return "", &bareError{dir: gitDir}
	case worktree != "":
		return fromDir(gitDir, worktree), nil
	}
	return top, nil
}

// fromDir is p taken from base when relative, its symbolic links resolved
// when it exists.
func fromDir(base, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}
