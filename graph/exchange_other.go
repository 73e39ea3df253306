//go:build !linux

package graph

// exchange is not available here: the caller renames.
func exchange(tmp, path string) (moveResult, error) { return moveUnsupported, nil }
