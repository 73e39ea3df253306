package watcher

import "syscall"

// ctimeOf is the inode change time of st, in nanoseconds.
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
