//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// readFile opens rel through os.Root, which resolves it beneath the root
// and refuses a link out of it; the real directory Judge is given is
// resolved by name afterwards.
func (t Tree) readFile(rel string, limit int64) ([]byte, fs.FileMode, error) {
	root, err := os.OpenRoot(t.Root)
	if err != nil {
		return nil, 0, err
	}
	defer root.Close()
	if beforeTreeOpen != nil {
		beforeTreeOpen(rel)
	}
	rel = path.Clean(rel)
	name := filepath.FromSlash(rel)
	st, err := root.Lstat(name)
	if err != nil {
		return nil, 0, outside(err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, 0, fmt.Errorf("%w (a symbolic link; not followed)", ErrNotRegular)
	}
	if !st.Mode().IsRegular() { // before the open: a named pipe would block it
		return nil, 0, notRegular(st.Mode())
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, 0, outside(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, notRegular(fi.Mode())
	}
	if t.Judge != nil {
		real, err := filepath.EvalSymlinks(filepath.Join(t.Root, filepath.Dir(name)))
		if err != nil {
			return nil, 0, err
		}
		rel, err := filepath.Rel(t.Real, real)
		if err != nil || !Within(t.Real, real) {
			return nil, 0, ErrOutside
		}
		if err := t.judge(filepath.ToSlash(filepath.Join(rel, "x"))); err != nil {
			return nil, 0, err
		}
	}
	if limit > 0 && fi.Size() > limit {
		return nil, 0, largerThan(fi.Size(), limit)
	}
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, 0, grewPast(limit)
	}
	return data, fi.Mode().Perm(), nil
}

// OpenDir opens a Tree's root for a batch of reads (Tree.Dir). Here
// os.Root opens it at each read: Dir is not used.
func OpenDir(root string) (*os.File, error) { return os.Open(root) }

// outside says ErrOutside for os.Root's refusal of a path out of it.
func outside(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent" {
		return ErrOutside
	}
	return err
}

func notRegular(m fs.FileMode) error {
	return fmt.Errorf("%w%s", ErrNotRegular, strings.TrimPrefix(NotRegular(m), "not a regular file"))
}
