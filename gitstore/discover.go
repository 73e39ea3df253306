package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/state"
)

// findDotGit walks up from dir as git's discovery does (setup.c,
// setup_git_directory_gently_1), looking at each level first for a .git
// entry git would take there: a .git file, or a .git directory that is a
// git directory (isGitDir); then at the directory itself as a git directory
// (a bare repository, or strata run inside a .git directory); then at its
// parent. A .git directory that is none (objects/ and refs/ left without
// HEAD by a process writing into a deleted repository) is passed over, as
// git passes it over. A git directory found before any .git is returned as
// a *bareError: a bare repository nested in another repository's folder is
// the bare one, not the outer repository (attack37d M3: strata walked on to
// the outer .git). The walk goes no higher than git's discovery goes
// (discoveryLimit): not into a $GIT_CEILING_DIRECTORIES entry or above it,
// and not onto another file system unless $GIT_DISCOVERY_ACROSS_FILESYSTEM
// is true; stopped there, it returns an error wrapping state.ErrNotRepo that
// names why. A $GIT_DISCOVERY_ACROSS_FILESYSTEM git refuses is refused
// before the walk (acrossFileSystems).
//
// A bare repository found is refused with a *disallowedBareError when
// safe.bareRepository is "explicit" (bareRepositoryExplicit), before
// anything of it is read, as git 2.38 and later refuse it.
func findDotGit(dir string) (root, dotgit string, err error) {
	across, err := acrossFileSystems()
	if err != nil {
		return "", "", err
	}
	root, dotgit, err = walkToDotGit(dir, newDiscoveryLimit(dir, across))
	var be *bareError
	if errors.As(err, &be) {
		explicit, cerr := bareRepositoryExplicit()
		switch {
		case cerr != nil:
			return "", "", cerr
		case explicit:
			return "", "", &disallowedBareError{dir: be.dir}
		}
	}
	return root, dotgit, err
}

// disallowedBareError is a bare repository discovery found while
// safe.bareRepository is "explicit": git refuses it (setup.c,
// GIT_DIR_DISALLOWED_BARE), with or without $GIT_WORK_TREE, and so does
// strata. Only a repository named by $GIT_DIR is used then.
type disallowedBareError struct{ dir string }

func (e *disallowedBareError) Error() string {
	return "cannot use bare repository " + state.TermSafe(e.dir) + " (safe.bareRepository is 'explicit'): git refuses it too, and nothing was read from it; to use it, name it: GIT_DIR=" + state.ShellWord(e.dir)
}

func (e *disallowedBareError) Unwrap() error { return state.ErrNotRepo }

// bareRepositoryExplicit reads safe.bareRepository as git 2.38 and later
// read it (get_allowed_bare_repo): from protected config only, the system
// and global files and the command line ($GIT_CONFIG_COUNT,
// $GIT_CONFIG_PARAMETERS), never the repository's own config, which is
// what the setting guards against (readConfig early, as readSafeDirectories
// reads safe.directory). It is "all" (the default) or "explicit", exactly;
// git dies on any other value, or on the key without one, wherever it
// stands, and strata refuses it with a *FormatError.
func bareRepositoryExplicit() (explicit bool, err error) {
	readConfig("", "", "", true, func(sec, sub, key, val string, hasVal bool, _ *configReader) {
		if sec != "safe" || sub != "" || key != "barerepository" || err != nil {
			return
		}
		switch {
		case hasVal && val == "explicit":
			explicit = true
		case hasVal && val == "all":
			explicit = false
		default:
			err = &FormatError{
				Msg: fmt.Sprintf("safe.bareRepository = %q is neither all nor explicit (git refuses it too: \"unable to parse 'safe.barerepository'\"); nothing was read", val),
				Fix: "set safe.bareRepository to all or explicit in the configuration that holds it (git config --global --get-all safe.bareRepository; git config --system --get-all safe.bareRepository)",
			}
		}
	})
	return explicit, err
}

// walkToDotGit is findDotGit's walk, within lim.
func walkToDotGit(dir string, lim *discoveryLimit) (root, dotgit string, err error) {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		// a .git file counts only as a regular file, as git reads one
		// (read_gitfile_gently): a pipe or device named .git is passed
		// over, never opened (attack37e L3: refused, exit 3)
		if fi, err := os.Stat(p); err == nil && (fi.Mode().IsRegular() || fi.IsDir() && isGitDir(p)) {
			return d, p, nil
		}
		if isGitDir(d) {
			return "", "", &bareError{dir: d}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("%s: %w", dir, state.ErrNotRepo)
		}
		if stop := lim.stop(d, parent); stop != nil {
			return "", "", stop
		}
		d = parent
	}
}

// discoveryLimit is where git's discovery (setup.c,
// setup_git_directory_gently_1) stops walking up from start.
type discoveryLimit struct {
	start   string
	ceiling string // the nearest $GIT_CEILING_DIRECTORIES entry above start, as written there or resolved
	ceilLen int    // its length in start (git's ceil_offset), -1 for none
	oneFS   bool   // $GIT_DISCOVERY_ACROSS_FILESYSTEM is not true
	dev     uint64 // start's device, when oneFS
	devErr  error
}

// deviceOf is the device holding path (stat's st_dev); a variable so that
// a test can put a file-system boundary where it needs one.
var deviceOf = statDevice

// newDiscoveryLimit is the limit of a walk from start; across is
// $GIT_DISCOVERY_ACROSS_FILESYSTEM as acrossFileSystems reads it.
func newDiscoveryLimit(start string, across bool) *discoveryLimit {
	l := &discoveryLimit{start: start, ceilLen: -1}
	l.ceiling, l.ceilLen = longestCeiling(start, ceilingDirs(os.Getenv("GIT_CEILING_DIRECTORIES")))
	l.oneFS = !across
	if l.oneFS {
		l.dev, l.devErr = deviceOf(start)
	}
	return l
}

// acrossFileSystems reads $GIT_DISCOVERY_ACROSS_FILESYSTEM as git's
// discovery does (git_env_bool): unset is false, else the value must be a
// boolean git reads (parseGitBool: "", true, yes, on, false, no, off in any
// case, or an integer such as 1, 0, 0x1 or 1k), with nothing around it.
// git dies on any other value (" true", "maybe": "bad boolean config value
// ' true' for 'GIT_DISCOVERY_ACROSS_FILESYSTEM'") before it looks for the
// repository, in every folder; strata refuses it there too, with a
// *FormatError (exit 3), rather than run where git refuses to.
func acrossFileSystems() (bool, error) {
	v, set := os.LookupEnv("GIT_DISCOVERY_ACROSS_FILESYSTEM")
	if !set {
		return false, nil
	}
	b, ok := parseGitBool(v)
	if !ok {
		return false, &FormatError{
			Msg: fmt.Sprintf("$GIT_DISCOVERY_ACROSS_FILESYSTEM = %q is not a boolean git reads (git refuses it too: \"bad boolean config value\"); set it to true or false, or unset it; nothing was written", v),
			Fix: "set GIT_DISCOVERY_ACROSS_FILESYSTEM to true or false (nothing around the word), or unset it: git refuses to run under any other value",
		}
	}
	return b, nil
}

// stop returns nil when git's walk goes on from d to its parent, else why
// it does not: parent is the ceiling or above it (git never looks in a
// ceiling directory), or on another device than the start (d is then the
// top of the start's file system, its mount point).
func (l *discoveryLimit) stop(d, parent string) error {
	n := len(parent)
	if parent == string(filepath.Separator) {
		n = 0
	}
	if n <= l.ceilLen {
		return fmt.Errorf("%s: %w (nor any parent below %s, a $GIT_CEILING_DIRECTORIES entry: discovery stops there, as git's does)", l.start, state.ErrNotRepo, l.ceiling)
	}
	if !l.oneFS {
		return nil
	}
	dev, err := deviceOf(parent)
	if l.devErr != nil || err != nil {
		if err == nil {
			err = l.devErr
		}
		return fmt.Errorf("%s: %w (stat: %v)", l.start, state.ErrNotRepo, err)
	}
	if dev != l.dev {
		return fmt.Errorf("%s: %w (nor any parent up to mount point %s: discovery stops at a file-system boundary, as git's does unless GIT_DISCOVERY_ACROSS_FILESYSTEM is true)", l.start, state.ErrNotRepo, d)
	}
	return nil
}

// ceilingDirs reads $GIT_CEILING_DIRECTORIES as git's
// canonicalize_ceiling_entry does: entries are separated by the path-list
// separator; relative ones are dropped; an empty entry turns off the
// resolving of symbolic links in the entries after it (they are taken as
// written); the others are resolved (an entry whose last component does not
// exist is kept, one that cannot be resolved otherwise is dropped).
func ceilingDirs(env string) []string {
	if env == "" {
		return nil
	}
	var out []string
	raw := false
	for _, c := range filepath.SplitList(env) {
		switch {
		case c == "":
			raw = true
		case !filepath.IsAbs(c):
		case raw:
			out = append(out, c)
		default:
			if r, ok := resolveCeiling(c); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// resolveCeiling is git's realpath with a missing last component allowed.
func resolveCeiling(p string) (string, bool) {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, true
	}
	p = filepath.Clean(p)
	dir, base := filepath.Split(p)
	if _, err := os.Lstat(p); !os.IsNotExist(err) || base == "" {
		return "", false
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	return filepath.Join(r, base), true
}

// longestCeiling is git's longest_ancestor_length: the longest entry that
// is a proper ancestor of path (a prefix followed by a separator; the root
// matches every path with length 0), and its length; -1 for none. A path
// equal to an entry is not below it: discovery starting in a ceiling
// directory looks there and above.
func longestCeiling(path string, ceilings []string) (string, int) {
	sep := string(filepath.Separator)
	best, longest := "", -1
	if path == sep {
		return best, longest
	}
	for _, c := range ceilings {
		// one trailing separator is not part of the entry, as git reads it
		// (the root's, and a raw entry's, such as "X/" after an empty
		// entry: attack37e L2, where strata recorded above that ceiling)
		n := len(c)
		if n > 0 && c[n-1] == filepath.Separator {
			n--
		}
		if !strings.HasPrefix(path, c[:n]) || len(path) <= n+1 || path[n] != filepath.Separator {
			continue
		}
		if n > longest {
			best, longest = c, n
		}
	}
	return best, longest
}
