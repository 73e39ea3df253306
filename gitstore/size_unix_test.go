//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

func blocksKB(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks / 2
	}
	return (fi.Size() + 1023) / 1024
}
