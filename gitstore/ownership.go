package gitstore

import (
	"cmp"
	"errors"
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
// names the repository as git does: root, or gitDir when there is no work
// tree (root "": a bare repository taken with $GIT_WORK_TREE), compared
// byte for byte after "~/" is expanded (attack37d L3: the bare case was
// compared with "", and its fix named an empty safe.directory, which
// empties git's list). The error names that directory too. Each path is
// judged by lstat. Root may use a repository owned by the user in
// $SUDO_UID, as git ≥ 2.35.3 lets it. The error is a *state.OwnershipError.
func checkOwnership(gitfile, root, gitDir string) error {
	v, set := os.LookupEnv("GIT_TEST_ASSUME_DIFFERENT_OWNER")
	b, _ := gitBool(v, true)
	different := testOwner && set && b
	repo := cmp.Or(root, gitDir) // what git names the repository by (ensure_valid_ownership's data.path)
	var bad *state.OwnershipError
	for _, p := range []string{gitfile, root, gitDir} {
		if p == "" {
			continue
		}
		owner, uid, sudo, ok := ownedByUs(p)
		if !ok || different {
			bad = &state.OwnershipError{Dir: repo, Path: p, Owner: owner, UID: uid, Sudo: sudo}
			break
		}
	}
	if bad == nil {
		return nil
	}
	for _, d := range readSafeDirectories() {
		if d == "*" || d == repo {
			return nil
		}
	}
	return bad
}

// ownedByUs is git's is_path_owned_by_current_uid: path's owner (lstat)
// against the effective uid, or, when that is root and path is not root's,
// against $SUDO_UID when it holds a number (sudo: a number other than 0;
// uid is then that, not who strata runs as). A path that cannot be read
// is not ours (owner -1).
func ownedByUs(path string) (owner, uid int, sudo, ok bool) {
	uid = os.Geteuid()
	owner, err := fileOwner(path)
	if err != nil {
		return -1, uid, false, false
	}
	if uid == 0 {
		if owner == 0 {
			return owner, uid, false, true
		}
		if n, ok := sudoUID(); ok {
			uid, sudo = n, n != 0
		}
	}
	return owner, uid, sudo, owner == uid
}

// sudoUID is $SUDO_UID read as git reads it (strtoul after leading
// spaces), when it holds a number.
func sudoUID() (int, bool) {
	v := strings.TrimLeft(os.Getenv("SUDO_UID"), " \t\n\v\f\r")
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "+"), 10, 64)
	if err != nil {
		return 0, false
	}
	return int(uint32(n)), true
}

// sudoOwner is the user sudo runs strata for, when strata runs as root
// through sudo on that user's repository: $SUDO_UID, when it is not root
// and owns (lstat) the work tree's top directory or the common git
// directory. 0 otherwise. Such a Store writes nothing (ErrSudo): what root
// creates in the repository would be root's, and a root-owned directory
// in .git stops the owner's next git commit and every strata command
// (attack31 F6).
func sudoOwner(root, commonDir string) int {
	if os.Geteuid() != 0 {
		return 0
	}
	uid, ok := sudoUID()
	if !ok || uid == 0 {
		return 0
	}
	for _, p := range []string{root, commonDir} {
		if p == "" {
			continue
		}
		if owner, err := fileOwner(p); err == nil && owner == uid {
			return uid
		}
	}
	return 0
}

// ErrSudo is a write refused in a repository strata runs in as root
// through sudo (sudoOwner): nothing is created there.
var ErrSudo = errors.New("strata runs as root through sudo in another user's repository and creates nothing in it")

// Sudo is the owner's uid when strata runs as root through sudo on that
// user's repository, 0 otherwise. Such a Store refuses to write (ErrSudo)
// and keeps none of its caches: a command that writes must refuse before
// it starts.
func (s *Store) Sudo() int { return s.sudo }

// writable is ErrSudo for a Store that must create nothing (Sudo), else nil.
func (s *Store) writable() error {
	if s.sudo != 0 {
		return ErrSudo
	}
	return nil
}
