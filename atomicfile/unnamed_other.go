//go:build !linux

package atomicfile

import (
	"io/fs"
	"os"
)

// Files without a name exist on Linux only: elsewhere a batch's new files
// are named temp files.
func (d *dir) openUnnamed(fs.FileMode) (*os.File, error) { return nil, errNoUnnamed }

func (d *dir) linkUnnamed(*os.File, string) error { return errNoUnnamed }

// renameNew is checkedRename here: no rename that refuses to replace.
func renameNew(tmp, name string) error { return checkedRename(tmp, name) }

func unnamedMax() int { return 0 }
