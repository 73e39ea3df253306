//go:build !linux

package watcher

import "syscall"

// ctimeOf is 0 where the watcher does not read the inode change time: a
// poll then compares size, mtime, inode and mode.
func ctimeOf(*syscall.Stat_t) int64 { return 0 }
