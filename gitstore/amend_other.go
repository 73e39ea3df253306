//go:build !linux

package gitstore

// nearestGit is nil where the processes above are not read.
func nearestGit() []string { return nil }
