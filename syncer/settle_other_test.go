//go:build !unix

package syncer

func settle() {}
