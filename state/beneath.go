package state

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrOutside is a file whose path, as the file system resolves it now,
// leaves its tree through a symbolic link (or a "..").
var ErrOutside = errors.New("its directory is a symbolic link out of the repository; not followed")

// Tree is a directory whose files are read only from inside it: the one
// door for every read of a file strata records, validates or compares
// (docs/contract.md §1 and §13). A check of a path's directories made
// before the read (where they resolve) says nothing of the read itself: a
// folder may be swapped for a symbolic link out of the tree in between.
// ReadFile therefore resolves the path itself, relative to a descriptor of
// the tree's root, and judges where it found the file before using a byte.
type Tree struct {
	Root string // the tree's directory, as named
	Real string // Root with every symbolic link resolved: Judge's terms
	// Judge, when set, judges the real directory the file was found in (a
	// path under Real, all links resolved): a .git directory or a nested
	// repository is inside the tree, yet not the tree's.
	Judge func(realDir string) error
	// Dir, when set, is Root held open for a batch of reads (OpenDir):
	// ReadFile resolves beneath it rather than opening Root at each read.
	// Once its holder has closed it, Root is opened at each read again.
	Dir *os.File
}

// ReadFile reads the regular file at rel (slash-separated, relative to
// Root), of at most limit bytes (no limit when limit <= 0), as ReadRegular
// does (never blocking, regular files only, a symbolic link at rel itself
// never followed), but found beneath Root: a symbolic link on the way that
// leads to another folder of the tree is followed, one that leads out of it
// gives an error wrapping ErrOutside, and the file's real directory is given
// to Judge. A missing file, or a directory on the way that is not one, gives
// an error wrapping fs.ErrNotExist.
func (t Tree) ReadFile(rel string, limit int64) ([]byte, error) {
	data, _, err := t.readFile(rel, limit)
	return data, err
}

// ReadFileMode is ReadFile, also giving the file's permission bits (from
// the descriptor read, not from a second look by name): for a writer that
// replaces the file and keeps its mode (the L3 graph file).
func (t Tree) ReadFileMode(rel string, limit int64) ([]byte, fs.FileMode, error) {
	return t.readFile(rel, limit)
}

// beforeTreeOpen, when set by a test, runs after a caller's checks and
// before ReadFile resolves the path: where a racing process swaps a folder.
var beforeTreeOpen func(rel string)

// maxLinks bounds the symbolic links one path may go through, as Linux's
// own resolution does (ELOOP after 40).
const maxLinks = 40

// splitRel splits a slash-separated relative path into its names,
// dropping empty ones and ".".
func splitRel(rel string) []string {
	var out []string
	for _, el := range strings.Split(rel, "/") {
		if el != "" && el != "." {
			out = append(out, el)
		}
	}
	return out
}

// linkTarget turns an absolute symbolic link's target into a path relative
// to the tree's root, when it is inside the tree (under Real or Root).
func (t Tree) linkTarget(target string) ([]string, bool) {
	target = filepath.Clean(target)
	for _, base := range []string{t.Real, t.Root} {
		if base != "" && Within(base, target) {
			rel, _ := filepath.Rel(base, target)
			return splitRel(filepath.ToSlash(rel)), true
		}
	}
	return nil, false
}

// judge runs Judge on the real directory of realRel.
func (t Tree) judge(realRel string) error {
	if t.Judge == nil {
		return nil
	}
	real := t.Real
	if real == "" {
		real = t.Root
	}
	return t.Judge(filepath.Join(real, filepath.FromSlash(path.Dir(realRel))))
}

// JudgeDir judges real, a directory with every symbolic link resolved (a
// writer's directory opened and read back from its descriptor), as a read
// through the door judges the folder it found a file in: not under Real
// (Root when Real is empty) is an error wrapping ErrOutside; then Judge.
func (t Tree) JudgeDir(real string) error {
	base := t.Real
	if base == "" {
		base = t.Root
	}
	if !Within(base, real) {
		return ErrOutside
	}
	if t.Judge == nil {
		return nil
	}
	return t.Judge(real)
}
