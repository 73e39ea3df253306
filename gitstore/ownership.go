package gitstore

import (
	"os"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/state"
)

// testOwner is set by test binaries only (UseTestOwner): then
// GIT_TEST_ASSUME_DIFFERENT_OWNER=1 takes every path for another user's,
// as it makes git do, so that a test can check strata refuses exactly where
// git does without running as root.
var testOwner bool

// UseTestOwner makes Open honour GIT_TEST_ASSUME_DIFFERENT_OWNER. Only test
// binaries call it.
func UseTestOwner() { testOwner = true }

// checkOwnership refuses a repository git 2.39 refuses (setup.c,
// ensure_valid_ownership): one whose .git file (gitfile, "" when .git is a
// directory), work-tree top directory (root) or git directory (gitDir: the
// .git directory, or what the .git file names) is not owned by the
// effective user, unless safe.directory (readSafeDirectories) is "*" or
// root itself, compared byte for byte after "~/" is expanded. Each path is
// judged by lstat. Root may use a repository owned by the user in
// $SUDO_UID, as git ≥ 2.35.3 lets it. The error is a *state.OwnershipError.
func checkOwnership(gitfile, root, gitDir string) error {
	v, set := os.LookupEnv("GIT_TEST_ASSUME_DIFFERENT_OWNER")
	different := testOwner && set && gitBool(v, true)
	var bad *state.OwnershipError
	for _, p := range []string{gitfile, root, gitDir} {
		if p == "" {
			continue
		}
		owner, uid, ok := ownedByUs(p)
		if !ok || different {
			bad = &state.OwnershipError{Dir: root, Path: p, Owner: owner, UID: uid}
			break
		}
	}
	if bad == nil {
		return nil
	}
	for _, d := range readSafeDirectories() {
		if d == "*" || d == root {
			return nil
		}
	}
	return bad
}

// ownedByUs is git's is_path_owned_by_current_uid: path's owner (lstat)
// against the effective uid, or, when that is root and path is not root's,
// against $SUDO_UID when it holds a number. A path that cannot be read is
// not ours (owner -1).
func ownedByUs(path string) (owner, uid int, ok bool) {
	uid = os.Geteuid()
	owner, err := fileOwner(path)
	if err != nil {
		return -1, uid, false
	}
	if uid == 0 {
		if owner == 0 {
			return owner, uid, true
		}
		if v := strings.TrimLeft(os.Getenv("SUDO_UID"), " \t\n\v\f\r"); v != "" {
			if n, err := strconv.ParseUint(strings.TrimPrefix(v, "+"), 10, 64); err == nil {
				uid = int(uint32(n))
			}
		}
	}
	return owner, uid, owner == uid
}
