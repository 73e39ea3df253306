// Package gitperm gives the files and directories strata creates inside a
// git directory the modes git would give them: git's own base modes (0666
// for a file, 0777 for a directory, less the umask; 0444 for objects and
// packs), then core.sharedRepository applied as git's adjust_shared_perm
// (path.c) applies it. One place, so that the object writer, the ref writer
// and every file under <gitdir>/strata agree, and so that another member of
// a shared repository's group can go on writing where strata wrote first.
package gitperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Base modes of what strata creates in a git directory, as git creates its
// own: the kernel takes the umask off, Shared.Fix then widens them.
const (
	File   fs.FileMode = 0o666 // refs, lock files, reflogs, strata's own files
	Dir    fs.FileMode = 0o777
	Object fs.FileMode = 0o444 // loose objects, packs and their indexes
)

// Shared is core.sharedRepository as git reads it (git_config_perm in
// setup.c): 0 is "umask" (modes as created), a positive value the
// permission bits added for the group and others (0660 "group", 0664
// "everybody"), a negative one the exact mode -(0xxx) that files get.
type Shared int

const (
	Umask     Shared = 0
	Group     Shared = 0o660
	Everybody Shared = 0o664
)

// Parse reads a core.sharedRepository value as git does; hasValue false is
// the key written without "=" (true). A mode that leaves the owner without
// read and write, or a word that is neither a mode nor a boolean, is an
// error, as git refuses them.
func Parse(value string, hasValue bool) (Shared, error) {
	if !hasValue {
		return Group, nil
	}
	switch value {
	case "umask":
		return Umask, nil
	case "group":
		return Group, nil
	case "all", "world", "everybody":
		return Everybody, nil
	}
	i, err := strconv.ParseInt(value, 8, 64)
	if err != nil && value != "" {
		// Not an octal number: a boolean (true is group).
		switch strings.ToLower(value) {
		case "true", "yes", "on":
			return Group, nil
		case "false", "no", "off":
			return Umask, nil
		}
		if n, err := strconv.Atoi(value); err == nil {
			if n != 0 {
				return Group, nil
			}
			return Umask, nil
		}
		return Umask, fmt.Errorf("core.sharedRepository: bad value %q", value)
	}
	switch i {
	case 0:
		return Umask, nil
	case 1:
		return Group, nil
	case 2:
		return Everybody, nil
	}
	if i&0o600 != 0o600 {
		return Umask, fmt.Errorf("core.sharedRepository: 0%03o leaves the owner without read and write", i)
	}
	return Shared(-(i & 0o666)), nil
}

// Mode is the mode git gives a file or directory (m.IsDir()) that was
// created with mode m (umask applied): calc_shared_perm, then for a
// directory the read bits copied to the execute bits and, when the group
// gets any access, the set-group-id bit, so that what is created inside
// keeps the directory's group.
func (s Shared) Mode(m fs.FileMode) fs.FileMode {
	if s == Umask {
		return m
	}
	tweak := fs.FileMode(s)
	if s < 0 {
		tweak = fs.FileMode(-s)
	}
	if m&0o200 == 0 {
		tweak &^= 0o222 // a read-only file (an object) stays read-only
	}
	if m&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	perm := m.Perm() | tweak
	if s < 0 {
		perm = tweak
	}
	out := m&^fs.ModePerm | perm
	if m.IsDir() {
		perm |= (perm & 0o444) >> 2
		out |= perm
		if perm&0o060 != 0 { // the group is given something: keep it inside
			out |= fs.ModeSetgid
		}
	}
	return out
}

// FixFile gives f, just created, its shared mode (as git's
// adjust_shared_perm, through the open descriptor). Nothing is done
// under Umask.
func (s Shared) FixFile(f *os.File) error {
	if s == Umask {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if want := s.Mode(fi.Mode()); want != fi.Mode() {
		return f.Chmod(want & (fs.ModePerm | fs.ModeSetgid))
	}
	return nil
}

// FixPath is FixFile for a file or directory known by its name.
func (s Shared) FixPath(name string) error {
	if s == Umask {
		return nil
	}
	fi, err := os.Lstat(name)
	if err != nil {
		return err
	}
	if want := s.Mode(fi.Mode()); want != fi.Mode() {
		return os.Chmod(name, want&(fs.ModePerm|fs.ModeSetgid))
	}
	return nil
}

// MkdirAll makes dir and its missing parents, as os.MkdirAll does with
// mode Dir, and gives each directory it made its shared mode (as git's
// safe_create_leading_directories). A directory removed meanwhile (git
// prunes the directories it empties) is made again, but only inside a git
// directory that exists: a directory holding HEAD must be dir's parent or
// above it. A git directory deleted under a running process (rm -rf .git,
// rm -rf of the whole work tree) is never made again, in part, by strata:
// the error is an *os.PathError wrapping ErrNoGitDir, which is
// fs.ErrNotExist too.
func (s Shared) MkdirAll(dir string) error {
	return s.MkdirAllMode(dir, Dir)
}

// ErrNoGitDir is MkdirAll's refusal to make a directory no git directory
// holds. It matches fs.ErrNotExist: the git directory is gone.
var ErrNoGitDir = fmt.Errorf("no git directory holds it; not made: %w", fs.ErrNotExist)

// inGitDir reports whether a directory holding HEAD (a git directory, or a
// linked worktree's) is dir's parent or lies above it.
func inGitDir(dir string) bool {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil && !fi.IsDir() {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// MkdirAllMode is MkdirAll with mode for dir itself (its parents get Dir).
func (s Shared) MkdirAllMode(dir string, mode fs.FileMode) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return &os.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
	}
	if !inGitDir(dir) {
		return &os.PathError{Op: "mkdir", Path: dir, Err: ErrNoGitDir}
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := s.MkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, mode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
				return nil // made by another process meanwhile: its mode is its maker's
			}
		}
		return err
	}
	return s.FixPath(dir)
}

// OpenFile opens name as os.OpenFile does with O_CREATE in flag and mode
// File, making its missing parent directories (MkdirAll: only inside an
// existing git directory); a file it
// creates gets its shared mode. A file that already exists keeps its mode.
func (s Shared) OpenFile(name string, flag int) (*os.File, error) {
	flag |= os.O_CREATE
	if s != Umask && flag&os.O_EXCL == 0 {
		// Whether this call creates the file decides whether its mode
		// is changed: try to create it first, else open what is there.
		f, err := s.OpenFile(name, flag|os.O_EXCL)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		return os.OpenFile(name, flag&^os.O_CREATE, 0)
	}
	f, err := os.OpenFile(name, flag, File)
	if errors.Is(err, fs.ErrNotExist) {
		if merr := s.MkdirAll(filepath.Dir(name)); merr != nil {
			return nil, merr
		}
		f, err = os.OpenFile(name, flag, File)
	}
	if err != nil {
		return nil, err
	}
	if flag&os.O_EXCL != 0 {
		if err := s.FixFile(f); err != nil {
			f.Close()
			os.Remove(name)
			return nil, err
		}
	}
	return f, nil
}
