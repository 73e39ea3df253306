package state

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirFlags open a folder on the way: O_PATH, since nothing is read from it
// (a folder one may pass through but not list still opens).
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// noOpenat2 is set once openat2(2) was refused (before Linux 5.6, or a
// sandbox not knowing it): the walk from then on.
var noOpenat2 atomic.Bool

// openFast opens rel beneath root in one openat2(2) that follows no
// symbolic link at all and never leaves root (RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS): the path of nearly every kept file, whose real
// path is then rel itself. A link anywhere on it (an in-tree link strata
// follows, or one at rel that it refuses), a "..", or a rename racing the
// kernel's check, is errWalk: the walk resolves it and says which.
func openFast(root int, rel string) (int, string, error) {
	if noOpenat2.Load() {
		return -1, "", errWalk
	}
	how := unix.OpenHow{
		Flags:   fileFlags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(root, rel, &how)
		switch {
		case err == nil:
			return fd, rel, nil
		case err == unix.EINTR:
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM), errors.Is(err, unix.E2BIG):
			noOpenat2.Store(true)
			return -1, "", errWalk
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EAGAIN), errors.Is(err, unix.ENXIO):
			return -1, "", errWalk
		}
		return -1, "", err
	}
}
