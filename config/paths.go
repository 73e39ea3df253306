package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Error is a mistake in .strata.yaml found after it decoded, positioned at
// the key at fault. It is a usage error: the configuration must be fixed.
type Error struct{ state.Problem }

func (e *Error) Error() string { return e.Problem.Error() }

// ReadError is a .strata.yaml that is there but cannot be read: a symbolic
// link strata does not follow (out of the work tree, into the git
// directory, dangling), a named pipe, a directory, an I/O error. Commands
// stop on it (exit 3); doctor reports it as its config finding.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read " + FileName + ": " + errText(e.Err) }

func (e *ReadError) Unwrap() error { return e.Err }

// checkFileKey checks the path named by `memory:` or `graph:`. A committed
// configuration travels with every clone, so it may only name a file of the
// work tree, checked as a glob is: repository-relative, no "..", nothing
// inside .git. The one file outside the work tree it may name is Claude
// Code's auto-memory file of this repository, which strata finds by itself
// anyway; $MEMORY_FILE_PATH, set by the user, is read from the environment.
func (c *Config) checkFileKey(p string) error {
	if p == "" || p == c.AutoMemory() {
		return nil
	}
	if p == "~" || len(p) > 1 && p[0] == '~' {
		return errors.New("outside the work tree: name a repository-relative path (only Claude Code's auto-memory file is kept outside it, found without configuration)")
	}
	return checkRel(p)
}

// checkFormat checks a rule's format: key.
func checkFormat(f string) error {
	if f == "" || slices.Contains(validate.Formats, f) {
		return nil
	}
	return fmt.Errorf("unknown format %q, want one of %s", f, strings.Join(validate.Formats, ", "))
}

// readConfig reads root/.strata.yaml, a regular file. A committed
// .strata.yaml may be a symbolic link: it is followed only when its real
// path is a file of the work tree, outside .git and the git directories
// (docs/contract.md §2). One that leaves them is refused without a word of
// its target, which may be any file on the machine (/proc/self/environ,
// a key): the error would quote the lines it could not parse.
func readConfig(root string, gitDirs []string) ([]byte, error) {
	name := filepath.Join(root, FileName)
	fi, err := os.Lstat(name)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return state.ReadRegular(name, maxConfigSize, false)
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, errors.New("a symbolic link that does not resolve; not followed")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if !state.Within(realRoot, real) {
		return nil, errors.New("a symbolic link out of the work tree; not followed")
	}
	rel, _ := filepath.Rel(realRoot, real)
	inGit := errors.Is(state.CheckPath(filepath.ToSlash(rel)), state.ErrDotGit)
	for _, d := range gitDirs {
		if d, err := filepath.EvalSymlinks(d); err == nil && state.Within(d, real) {
			inGit = true
		}
	}
	if inGit {
		return nil, errors.New("a symbolic link into the git directory; not followed")
	}
	// The real path, every link resolved: a link put in its place since
	// is not followed.
	return state.ReadRegular(real, maxConfigSize, false)
}

// maxConfigSize bounds .strata.yaml, as the YAML decoder does.
const maxConfigSize = validate.DefaultMaxSize

// errText drops the file name an *fs.PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
