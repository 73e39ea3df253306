//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

// statDevice is the device holding path (stat, following links, as git's
// get_device_or_die).
func statDevice(path string) (uint64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Dev), nil // int32 on some systems
}
