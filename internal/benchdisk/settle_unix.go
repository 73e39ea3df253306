//go:build unix

package benchdisk

import "syscall"

// Settle writes out the dirty data of every file system, so a measured step
// does not pay for what was written before it.
func Settle() { syscall.Sync() }
