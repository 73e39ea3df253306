//go:build linux

package main

import (
	"os"
	"syscall"
	"time"
)

// minorFaults is the minor page faults of the process ps ended.
func minorFaults(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Minflt
	}
	return 0
}

// faultCost is what one minor page fault costs here, in microseconds:
// the best of five times for touching each page of 16 MiB of memory just
// mapped, each touch one fault (the kernel's zeroing of the page counted in,
// as it is in a program's first touch of a page).
func faultCost() (float64, bool) {
	const size = 16 << 20
	page := os.Getpagesize()
	best := time.Duration(0)
	for range 5 {
		m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0, false
		}
		t0 := time.Now()
		for i := 0; i < size; i += page {
			m[i] = 1
		}
		d := time.Since(t0)
		_ = syscall.Munmap(m)
		if best == 0 || d < best {
			best = d
		}
	}
	return float64(best.Nanoseconds()) / 1000 / float64(size/page), true
}
