//go:build !unix

package engine

// lockWrites is a no-op where flock(2) is missing: two strata processes
// writing one file at the same moment are then ordered only by the checks
// of write and Checkouts.Commit (see writelock_unix.go).
func (e *Engine) lockWrites() (func(), error) { return func() {}, nil }
