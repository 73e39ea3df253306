package atomicfile

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// RemoveUnchanged removes the file at name only while it is still the one
// its caller checked, as a replace does (Batch.Unchanged): the file is
// first moved aside, in one step, to a temp name in its folder, and only
// then compared (unchanged, given what was moved). The checked file is
// removed. Another (an agent's save that landed after the check) is moved
// back, never over a file that appeared at the name meanwhile (a newer
// save, which then stays; the one moved aside, superseded by its own
// writer, is left at the temp name: a Leftover once this process has
// ended), and removed is false. A process killed while the file is aside
// leaves it there too. A file already gone counts as removed. Before, a
// removal read and checked the file, then removed whatever was at the name.
func RemoveUnchanged(name string, unchanged func(now fs.FileInfo) bool) (removed bool, err error) {
	d, err := openDir(filepath.Dir(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, err
	}
	defer d.close()
	if ReplaceStep != nil {
		ReplaceStep("checked", name) // between the caller's check and the move aside
	}
	base := filepath.Base(name)
	for try := 0; ; try++ {
		tmp := tempName(base)
		err := d.renameNew(base, tmp)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return true, nil
		case errors.Is(err, fs.ErrExist) && try < 100:
			continue // a temp name left by an earlier process of the same id
		case err != nil:
			return false, err
		}
		fi, err := d.lstat(tmp)
		if err == nil && unchanged(fi) {
			if err := d.remove(tmp); err != nil {
				return false, err
			}
			d.sync()
			return true, nil
		}
		if err := d.renameNew(tmp, base); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		return false, nil
	}
}
