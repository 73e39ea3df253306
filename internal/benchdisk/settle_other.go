//go:build !unix

package benchdisk

// Settle does nothing where there is no sync(2).
func Settle() {}
