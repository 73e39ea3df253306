//go:build !unix

package gitstore

// statDevice: without devices here every path is on one file system.
func statDevice(path string) (uint64, error) { return 0, nil }
