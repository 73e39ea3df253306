//go:build unix

package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockWrites takes the exclusive flock(2) on <common dir>/strata/writes.lock,
// waiting for it, and returns its release. Every strata process holds it
// while it compares a kept file with the version it expects and renames the
// new version over it (write, Checkouts.Commit), so that two of them never
// both find the same old version and each rename theirs over it, the
// second silently dropping the first's. The kernel drops the lock when its
// holder dies; the file is never removed (the lock lives on its inode).
func (e *Engine) lockWrites() (func(), error) {
	name := filepath.Join(e.store.CommonDir(), "strata", "writes.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, os.ErrNotExist) && os.MkdirAll(filepath.Dir(name), 0o755) == nil {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("lock writes: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock writes: %s: %w", name, err)
	}
	return func() { f.Close() }, nil
}
