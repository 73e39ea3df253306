//go:build unix

package odb

import (
	"os"
	"syscall"
)

// mapFile maps f's first size bytes read-only. Git maps its packs the same
// way; a pack is never rewritten in place (a repack writes a new one and
// removes the old, whose mapping stays readable), and a fault from a file
// cut short under the mapping is turned into an error (readGuarded).
func mapFile(f *os.File, size int64) (mem, func(), bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return mem(b), func() { syscall.Munmap(b) }, true
}
