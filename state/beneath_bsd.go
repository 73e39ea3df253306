//go:build darwin || freebsd || netbsd || openbsd

package state

import "golang.org/x/sys/unix"

// dirFlags open a folder on the way.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openFast has no one-call resolution beneath a folder here: the walk.
func openFast(int, string) (int, string, error) { return -1, "", errWalk }
