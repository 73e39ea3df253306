//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// Only Linux has syncfs(2): elsewhere a batch fsyncs each file.
func syncFSOK() bool { return false }

func device(os.FileInfo) (uint64, bool) { return 0, false }

func syncFS(*os.File) error { return errors.ErrUnsupported }

func handle(*os.File) (*os.File, error) { return nil, errors.ErrUnsupported }

func fewDirty() bool { return false }

// FewDirty is unused where there is no syncfs(2).
var FewDirty int64
