// Package gitstore keeps the history of strata's kept files in git, on the
// refs refs/strata/state and refs/strata/rejected (docs/contract.md §4),
// without touching HEAD, the index, the work tree, the user's branches or
// their config. Objects are read and written by its internal package odb, as
// git lays them out (loose, packed, borrowed through alternates); refs are
// moved by compare-and-swap under git's own lock-file protocol. It and odb are
// the only packages that import go-git, for its plumbing types and its
// config, index and gitignore formats; errors are translated into the state
// package's sentinels (ErrNotFound, ErrLocked, ErrUnchanged, ErrNotRepo)
// here, so nothing above this package sees a go-git type. The on-disk layout
// is described in docs/format.md.
package gitstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// Store is one repository opened for recording and reading strata's history.
// A Store is safe for concurrent use; separate Stores (and processes, and git
// itself) on the same repository coordinate through git's ref lock files.
type Store struct {
	root      string // work-tree root, absolute, symlinks resolved
	gitDir    string // this work tree's git dir
	linkRoot  string // root as the user's path names it, through a symbolic link; "" when that is root (linkedDirs)
	linkGit   string // gitDir as git names it before resolving links; "" when that is gitDir (linkedDirs)
	commonDir string // the common git dir (== gitDir outside linked worktrees)
	worktree  string // linked worktree's ref component (WorktreeName), "" in the main work tree
	prefix    string // "" for the work tree's refs, "home/" for the home refs (OpenHome)

	// mu serialises use of objects (odb.DB is not safe for concurrent use)
	// and of the in-memory caches below.
	mu                 sync.Mutex
	objects            *odb.DB                         // strata's own reads and writes of objects (internal/odb)
	trees              map[plumbing.Hash][]treeEntry   // decoded trees by hash; content-addressed, never stale
	partial            bool                            // a partial clone: a missing object may be fetched (readObject)
	promisorDown       bool                            // a fetch of a missing object failed: no more are tried (fetchPromised)
	promisorWait       time.Duration                   // bounds one fetch of a missing object (Options.PromisorTimeout)
	promisorRemembered bool                            // promisorDown from an earlier process's note (promisorRecentlyDown)
	shallow            map[plumbing.Hash]bool          // a shallow clone's boundary commits (<commondir>/shallow): read as roots (shallowList)
	shallowOnce        sync.Once                       // reads shallow (shallowList)
	configMu           sync.Mutex                      // guards rules and settings, read again after ForgetConfig
	rulesRead          bool                            // rules holds what git's configuration says
	rules              ignoreSettings                  // git's settings for the ignore and attribute rules
	settingsRead       bool                            // settings holds what git's configuration says
	settings           Settings                        // strata's own settings in git's configuration
	treeBytes          int                             // treeCost of what trees holds
	commits            map[plumbing.Hash]plumbing.Hash // commit -> its tree; content-addressed
	memo               ruleMemo                        // look-ups in the rule sets' trees (rulememo.go)
	indexes            map[string]*refIndex            // per-ref time index (index.go)
	counter            *os.File                        // open gc-count file (gc.go)
	shared             func() gitperm.Shared           // core.sharedRepository, read at the first file created
	sudo               int                             // the owner's uid under sudo: nothing is written (Sudo)

	// Work counters, read by the tests that check a merge's work stays
	// near linear in the history it reads.
	walkSteps int // queue entries the merge-base walk looked at (walk)
	subMerges int // merges of merge bases run (baseFiles)
	treeReads int // trees read and decoded (tree): the rule sets answer from the memo (rulememo.go)
}

// Open finds the repository containing dir, walking up through its parents,
// and opens it. Linked worktrees are supported: refs are read from and written
// to the common git directory. Open returns an error wrapping
// state.ErrNotRepo when dir is not inside a git work tree, and a
// *state.OwnershipError (which wraps it too) for a repository git refuses
// for its owner (checkOwnership).
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// Options are what a Store is opened with (OpenWith).
type Options struct {
	// PromisorTimeout bounds the wait for git to fetch one object a
	// partial clone lacks (fetchPromised); 0 is the package's
	// PromisorTimeout. A hook that must answer within its caller's own
	// timeout (Claude Code's is 60 s) sets a shorter one.
	PromisorTimeout time.Duration
}

// OpenWith is Open with the options o.
func OpenWith(dir string, o Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	given := abs // as the user named it ($PWD, -C): git matches includeIf gitdir: against it too
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	var root, gitDir, commonDir, linkRoot, linkGit string
	explicit := os.Getenv("GIT_DIR") != "" // before Open sets it for its git processes
	if env := os.Getenv("GIT_DIR"); env != "" {
		if root, gitDir, commonDir, err = explicitDirs(abs, env); err != nil {
			return nil, err
		}
		if linkGit = linkedGitDir(given, env, gitDir); linkGit != "" {
			os.Setenv("GIT_DIR", linkGit)
		}
	} else {
		var dotgit string
		root, dotgit, err = findDotGit(abs)
		if b, ok := bareTakesWorkTree(err); ok {
			// git's setup_bare_git_dir: a bare repository found by
			// discovery with $GIT_WORK_TREE set, or naming its work tree
			// (core.worktree, as a submodule's .git/modules/NAME does), is
			// taken as if $GIT_DIR named it (attack37 L5, attack37e L1:
			// refused as bare); its owner is checked, as discovery checks it
			if err := checkOwnership("", "", b); err != nil {
				return nil, err
			}
			if root, gitDir, commonDir, err = explicitDirs(abs, b); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, err
		} else {
			if gitDir, commonDir, err = gitDirs(root, dotgit); err != nil {
				return nil, fmt.Errorf("%s: %w", root, err)
			}
			gitfile, ownDir := "", dotgit // what git checks the ownership of
			if fi, err := os.Stat(dotgit); err == nil && !fi.IsDir() {
				gitfile, ownDir = dotgit, gitDir
			}
			if err := checkOwnership(gitfile, root, ownDir); err != nil {
				return nil, err
			}
			// The git dir found may name its work tree elsewhere
			// (core.worktree, the "dotfiles" set-up, or $GIT_WORK_TREE), as
			// git takes it: taken for the folder holding .git, every kept
			// file would be recorded as deleted and sync would delete them
			// on the peers (attack27 F1).
			top := root
			if gitfile == "" {
				linkRoot, linkGit = linkedTop(given, abs, top)
			}
			if root, err = setWorkTree(abs, top, gitDir, commonDir); err != nil {
				return nil, err
			}
			if root != top {
				if err := checkWorkTree(root); err != nil {
					return nil, err
				}
				// The git processes strata runs in the work tree find the
				// repository only through these, as under $GIT_DIR.
				os.Setenv("GIT_DIR", cmp.Or(linkGit, gitDir))
				os.Setenv("GIT_WORK_TREE", root)
				linkRoot = ""
			}
		}
	}
	partial, err := checkFormat(commonDir)
	if err != nil {
		return nil, err
	}
	if err := checkObjectDir(commonDir, abs, root, explicit); err != nil {
		return nil, err
	}
	s := &Store{
		root:      root,
		gitDir:    gitDir,
		linkRoot:  linkRoot,
		linkGit:   linkGit,
		commonDir: commonDir,
		trees:     make(map[plumbing.Hash][]treeEntry),
		commits:   make(map[plumbing.Hash]plumbing.Hash),
		indexes:   make(map[string]*refIndex),
		partial:   partial,
		sudo:      sudoOwner(root, commonDir),

		promisorWait: o.PromisorTimeout,
	}
	if gitDir != commonDir {
		if s.worktree, err = worktreeName(gitDir, commonDir); err != nil {
			return nil, err
		}
	}
	s.shared = sync.OnceValue(func() gitperm.Shared { return readShared(gitDir, linkGit, commonDir) })
	s.objects = odb.Open(filepath.Join(commonDir, "objects"))
	s.objects.Shared = s.shared
	// read as git reads it, before objects/info/alternates: a clone whose
	// objects git finds only through it had an unreadable HEAD here
	// (attack31 F2); relative entries are taken from the top of the work
	// tree, where git runs once it found the repository (attack31b G:
	// taken from a subfolder they named nothing, or another store)
	s.objects.SetEnvAlternates(os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"), cmp.Or(root, abs))
	if s.sudo != 0 {
		s.objects.Refuse = ErrSudo
	}
	return s, nil
}

// bareTakesWorkTree returns the bare repository a discovery that failed
// with err found (a *bareError), when git takes a work tree for it:
// $GIT_WORK_TREE is set, or its config names one (core.worktree, core.bare
// not true); ok is false otherwise.
func bareTakesWorkTree(err error) (bare string, ok bool) {
	var be *bareError
	if !errors.As(err, &be) {
		return "", false
	}
	if os.Getenv("GIT_WORK_TREE") != "" {
		return be.dir, true
	}
	gitDir, commonDir, gerr := gitDirs(filepath.Dir(be.dir), be.dir)
	if gerr != nil {
		return "", false
	}
	worktree, isBare := workTreeSettings(gitDir, commonDir)
	return be.dir, worktree != "" && !isBare
}

// explicitDirs finds the repository as git does when $GIT_DIR is set (as
// git sets it for the hooks it runs in a linked worktree, and as users set
// it for a git dir kept apart from its work tree, the "dotfiles" set-up):
// the git dir is $GIT_DIR (a directory or a .git file), taken from dir
// when relative; the work tree is as setWorkTree finds it ($GIT_WORK_TREE,
// else none for a bare one, else core.worktree), else dir itself, as git
// takes the current directory for the top of the work tree then. No
// discovery takes place, and so, as in git, no ownership
// check: whoever set $GIT_DIR chose the repository. Both variables are
// then set to the absolute paths found, for the git processes strata runs.
func explicitDirs(dir, env string) (root, gitDir, commonDir string, err error) {
	named := fromDir(dir, env)
	if gitDir, commonDir, err = gitDirs(filepath.Dir(named), named); err != nil {
		return "", "", "", fmt.Errorf("$GIT_DIR %s: %w", named, state.ErrNotRepo)
	}
	if root, err = setWorkTree(dir, "", gitDir, commonDir); err != nil {
		return "", "", "", err
	}
	if root == "" {
		// git takes the current directory for the top of the work tree;
		// but when discovery from it finds this very git directory (a
		// $GIT_DIR exported by a tool, strata run in a subfolder), its work
		// tree is the one: taken from the subfolder, every kept file
		// outside it would be recorded as deleted, and published by sync
		// (attack19 verify N7)
		// (git reads no $GIT_DISCOVERY_ACROSS_FILESYSTEM under $GIT_DIR:
		// a value it would refuse is taken for false here)
		root = dir
		across, _ := acrossFileSystems()
		if top, dotgit, err := walkToDotGit(dir, newDiscoveryLimit(dir, across)); err == nil {
			if g, _, err := gitDirs(top, dotgit); err == nil && g == gitDir {
				root = top
			}
		}
	}
	if err := checkWorkTree(root); err != nil {
		return "", "", "", err
	}
	// The git processes strata runs (in the work tree, or with -C) find
	// the same repository: relative values would be taken from there.
	os.Setenv("GIT_DIR", named)
	os.Setenv("GIT_WORK_TREE", root)
	return root, gitDir, commonDir, nil
}

// checkWorkTree refuses a work tree that is not a directory, as git
// refuses to chdir into it.
func checkWorkTree(root string) error {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("work tree %s (named by core.worktree or $GIT_WORK_TREE) does not exist: %w", root, state.ErrNotRepo)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("work tree %s (named by core.worktree or $GIT_WORK_TREE) is not a folder: %w", root, state.ErrNotRepo)
	case err != nil:
		return fmt.Errorf("work tree %s: %w", root, state.ErrNotRepo)
	}
	return nil
}

// isGitDir reports whether d is a git directory as git's is_git_directory
// judges one: objects/ and refs/ in its common directory, and a valid HEAD
// in d itself (validHead).
func isGitDir(d string) bool {
	common := d
	if b, err := state.ReadRegular(filepath.Join(d, "commondir"), 0, true); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(d, c)
		}
		common = c
	}
	for _, name := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, name)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return validHead(filepath.Join(d, "HEAD"))
}

// validHead reports whether the file HEAD is one git accepts (its
// validate_headref): a symbolic link into refs/, "ref: refs/…", or an
// object id, in the first 255 bytes, all git reads of it. Only the start of
// a name under refs/ is looked at: a HEAD naming a branch by a name git
// refuses ("ref: refs/heads/main.lock") is a repository's HEAD for git,
// one that names no branch (readHeadFile).
func validHead(head string) bool {
	fi, err := os.Lstat(head)
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(head)
		return err == nil && strings.HasPrefix(target, "refs/")
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	f, err := openRegular(head)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 255)
	n, _ := io.ReadFull(f, buf)
	s := string(buf[:n])
	if rest, ok := strings.CutPrefix(s, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(rest, " \t\n\r"), "refs/")
	}
	if len(s) < 40 {
		return false
	}
	for _, c := range s[:40] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// bareError is strata run in a bare repository, which has no work tree and
// so no kept files.
type bareError struct {
	dir      string
	worktree string // core.worktree, which git ignores when core.bare is true
}

func (e *bareError) Error() string {
	if e.worktree != "" {
		return e.dir + " is a bare repository (core.bare is true) that also names a work tree (core.worktree " + e.worktree + "); git takes no work tree then, and warns that the two do not make sense, and strata needs a work tree: unset one of them (git --git-dir=" + e.dir + " config --unset core.bare)"
	}
	if filepath.Base(e.dir) == ".git" {
		return e.dir + " is a git directory, and strata runs inside it: git takes no work tree there, and strata needs one (run it in the work tree)"
	}
	return e.dir + " is a bare repository; strata needs a work tree (run it in a clone with one, e.g. git clone " + e.dir + ")"
}

func (e *bareError) Unwrap() error { return state.ErrNotRepo }

// gitDirs resolves the git dir and the common dir of the work tree at root.
func gitDirs(root, dotgit string) (gitDir, commonDir string, err error) {
	fi, err := os.Stat(dotgit)
	if err != nil {
		return "", "", err
	}
	gitDir = dotgit
	if !fi.IsDir() {
		b, err := state.ReadRegular(dotgit, 0, true)
		if err != nil {
			return "", "", err
		}
		line := strings.TrimSpace(string(b))
		if !strings.HasPrefix(line, "gitdir:") {
			return "", "", fmt.Errorf(".git: %w", state.ErrNotRepo)
		}
		gitDir = strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
	}
	if gitDir, err = filepath.EvalSymlinks(gitDir); err != nil {
		return "", "", fmt.Errorf("git dir: %w", state.ErrNotRepo)
	}
	commonDir = gitDir
	if b, err := state.ReadRegular(filepath.Join(gitDir, "commondir"), 0, true); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		if commonDir, err = filepath.EvalSymlinks(c); err != nil {
			return "", "", fmt.Errorf("common dir: %w", state.ErrNotRepo)
		}
	}
	if _, err := os.Stat(filepath.Join(commonDir, "objects")); err != nil {
		return "", "", fmt.Errorf("objects: %w", state.ErrNotRepo)
	}
	if !isGitDir(gitDir) {
		return "", "", fmt.Errorf("%s: no valid HEAD, objects or refs: %w", gitDir, state.ErrNotRepo)
	}
	return gitDir, commonDir, nil
}

// Close releases the files the Store keeps open (pack files, the gc
// counter). The Store must not be used afterwards. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects.Close()
	if s.counter != nil {
		s.counter.Close()
		s.counter = nil
	}
	return nil
}

// Root returns the work-tree root: absolute, symlinks resolved.
func (s *Store) Root() string { return s.root }

// Named is the top of the work tree as the user's path names it, through a
// symbolic link (linkedTop), else Root. A second store of the repository
// opened from it (the watcher's sync, its reload of .strata.yaml) reads the
// [includeIf "gitdir:…"] blocks this one reads; opened from Root, the
// watcher's sync missed a core.excludesFile set there and published the
// file it ignores (attack31b A).
func (s *Store) Named() string { return cmp.Or(s.linkRoot, s.root) }

// GitDir returns this work tree's git dir: .git, or .git/worktrees/<name> in
// a linked worktree.
func (s *Store) GitDir() string { return s.gitDir }

// IndexFile is the work tree's own index, in its git directory: git
// writes a new one as index.lock beside it and renames it over the old.
func (s *Store) IndexFile() string { return filepath.Join(s.gitDir, "index") }

// HeadFiles are the files git writes when HEAD moves, the work tree's HEAD
// first (a detached one, a checkout): ORIG_HEAD (a reset, a merge, a
// rebase), HEAD's reflog (unless core.logAllRefUpdates is off),
// packed-refs (a git pack-refs right after the branch moved removes its
// loose file), and the loose file of the branch HEAD names, as it names
// one now (a commit, a reset: with no reflog, the only one a `git reset
// --soft` writes besides ORIG_HEAD). branch is that branch ("" for a
// detached HEAD).
func (s *Store) HeadFiles() (files []string, branch string) {
	files = []string{filepath.Join(s.gitDir, "HEAD"), filepath.Join(s.gitDir, "ORIG_HEAD"), filepath.Join(s.gitDir, "logs", "HEAD"),
		filepath.Join(s.commonDir, "packed-refs")}
	branch = s.HeadBranch()
	if branch != "" {
		files = append(files, s.refFile(branch))
	}
	return files, branch
}

// HeadBranch is the branch the work tree's HEAD names ("refs/heads/…"),
// "" for a detached or unreadable HEAD.
func (s *Store) HeadBranch() string {
	ref, _ := readHeadFile(filepath.Join(s.gitDir, "HEAD"))
	return ref
}

// readHeadFile reads a HEAD file (a work tree's HEAD, or a gitrules-head
// strata wrote) as git 2.39's files backend does (files_read_raw_ref): a
// symbolic link whose target is a ref's name under refs/ names that branch,
// as git writes HEAD with core.preferSymlinkRefs (attack30b F1: read as
// detached); any other file, a link to elsewhere followed, holds what a
// loose ref file holds (parseLooseRef): "ref: " and the branch, or an
// object id and maybe more after white space. ref is the branch it names,
// hash the commit a detached one names; both are empty for a file that is
// neither (git: a broken HEAD), unreadable, or names a ref outside refs/ or
// by a name git refuses (refName, git's check_refname_format: git reads no
// branch for "ref: refs/heads//main", "ref: refs/heads/main.lock" or "ref:
// refs/heads/main\njunk", and git symbolic-ref HEAD says "no such ref").
// A link to such a name is followed, as git follows it: HEAD linked to
// refs/heads/./main is detached at main's commit.
func readHeadFile(file string) (ref string, hash plumbing.Hash) {
	if target, err := os.Readlink(file); err == nil {
		if target = filepath.ToSlash(target); strings.HasPrefix(target, "refs/") && refName(target) {
			return target, plumbing.ZeroHash
		}
	}
	data, err := state.ReadRegular(file, 4096, true)
	if err != nil {
		return "", plumbing.ZeroHash
	}
	h, target, sym, ok := parseLooseRef(data)
	switch {
	case !ok:
		return "", plumbing.ZeroHash
	case !sym:
		return "", h
	case !strings.HasPrefix(target, "refs/") || !refName(target):
		// git takes a name outside refs/ only through a link (validate_headref
		// refuses the repository for "ref: HEAD"); no branch either way
		return "", plumbing.ZeroHash
	}
	return target, plumbing.ZeroHash
}

// CommonDir returns the git directory shared by all work trees; refs and
// objects live there.
func (s *Store) CommonDir() string { return s.commonDir }

// Shared returns the repository's core.sharedRepository: every file and
// directory strata creates in a git directory gets its mode from it
// (package gitperm), as git's own do. The configuration is read at the
// first call.
func (s *Store) Shared() gitperm.Shared { return s.shared() }

// StateRef returns the ref this work tree records valid versions on:
// refs/strata/state, or refs/strata/worktrees/<name>/state in a linked
// worktree.
func (s *Store) StateRef() string { return s.ref("state") }

// RejectedRef returns the ref this work tree records rejected versions on:
// refs/strata/rejected, or refs/strata/worktrees/<name>/rejected in a linked
// worktree.
func (s *Store) RejectedRef() string { return s.ref("rejected") }

// WorktreeName is the ref component that stands for the linked worktree
// whose id (its folder's name under <commondir>/worktrees/) is id, in
// refs/strata/worktrees/<component>/...: the id itself when git takes it
// for a ref component (refnameFormat; every id git 2.22 and later makes,
// and every name strata has used), else the id escaped as EscapeRemote
// escapes a remote (git before 2.22 kept the folder's name as it was: "my
// wt" is my%20wt), which reverses, so no two such ids share a component.
// An id whose escaped form is another worktree's id is refused on Open
// (worktreeName).
func WorktreeName(id string) string {
	if !strings.Contains(id, "/") && refnameFormat("refs/strata/worktrees/"+id+"/state") {
		return id
	}
	return EscapeRemote(id)
}

// worktreeName is the ref component of the linked worktree whose git dir
// is gitDir (WorktreeName). Two worktrees whose ids share a component (a
// folder "my%20wt" beside "my wt") would record on one ref, so each of
// the two is refused: the one whose id escapes into the other's id, and
// the one whose id, valid as it is, is the escaped form of the other's
// (attack37d L4: that one took the other's history as its own).
func worktreeName(gitDir, commonDir string) (string, error) {
	id := filepath.Base(gitDir)
	name := WorktreeName(id)
	isWorktree := func(other string) bool {
		fi, err := os.Stat(filepath.Join(commonDir, "worktrees", other))
		return err == nil && fi.IsDir()
	}
	if name != id && isWorktree(name) {
		return "", &FormatError{
			Msg: fmt.Sprintf("linked worktree %q: its id is no ref name git takes, and escaped for strata's refs it is %s, the id of another linked worktree; remove one of the two and add it again (git worktree remove, git worktree add); nothing was written", id, name),
			Fix: worktreeCollisionFix,
		}
	}
	if name == id && strings.Contains(id, "%") {
		if other := UnescapeRemote(id); other != id && WorktreeName(other) == id && isWorktree(other) {
			return "", &FormatError{
				Msg: fmt.Sprintf("linked worktree %q: its id is also what strata's refs name another linked worktree, %q, whose id is no ref name git takes and escaped is %s; remove one of the two and add it again (git worktree remove, git worktree add); nothing was written", id, other, id),
				Fix: worktreeCollisionFix,
			}
		}
	}
	return name, nil
}

const worktreeCollisionFix = "remove one of the two worktrees and add it again (git worktree remove, git worktree add): git names new worktrees so that this cannot happen"

func (s *Store) ref(leaf string) string {
	leaf = s.prefix + leaf
	if s.worktree == "" {
		return "refs/strata/" + leaf
	}
	return "refs/strata/worktrees/" + s.worktree + "/" + leaf
}

// Head returns the commit hash ref points at. It returns an error wrapping
// state.ErrNotFound when the ref does not exist, and for a strata ref
// (refs/strata/...) naming an object there that is no commit (an
// annotated tag, a tree, a blob) a *NotCommitError: every reader took it
// for a missing commit, and said to refetch the history (attack37 L6).
func (s *Store) Head(ref string) (string, error) {
	h, err := s.readRef(ref)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(ref, "refs/strata/") {
		s.mu.Lock()
		t, _, err := s.objects.Stat(h)
		s.mu.Unlock()
		if err == nil && t != plumbing.CommitObject {
			return "", &NotCommitError{Ref: ref, Object: h.String(), Type: t.String(), Head: true}
		}
	}
	return h.String(), nil
}

// Resolve turns any commit-ish into a commit hash: a full or abbreviated
// hash, a ref name (refs/strata/state, a branch, a tag), HEAD, and the ~N and
// ^N suffixes. It returns an error wrapping state.ErrNotFound when rev names
// nothing.
func (s *Store) Resolve(rev string) (string, error) {
	h, err := s.resolve(rev)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

func (s *Store) resolve(rev string) (plumbing.Hash, error) {
	if plumbing.IsHash(rev) {
		h := plumbing.NewHash(rev)
		s.mu.Lock()
		_, err := s.commitTree(h)
		s.mu.Unlock()
		if errors.Is(err, state.ErrNotFound) {
			return plumbing.ZeroHash, fmt.Errorf("no such commit: %w", state.ErrNotFound)
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("resolve %s: %w", rev, err)
		}
		return h, nil
	}
	if strings.HasPrefix(rev, "refs/") && !strings.ContainsAny(rev, "~^@{:") {
		// Read plain refs ourselves: go-git's ref reader does not honour
		// git's lock files and may see a ref mid-rewrite.
		h, err := s.readRef(rev)
		if errors.Is(err, state.ErrNotFound) {
			return plumbing.ZeroHash, fmt.Errorf("no such ref: %w", state.ErrNotFound)
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("resolve %s: %w", rev, err)
		}
		return h, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.revParse(rev)
	if err != nil {
		return plumbing.ZeroHash, translate(err) // the caller names rev
	}
	return h, nil
}

// ReadFile returns the bytes path had in commit (a hash or any commit-ish
// Resolve accepts) when they are at most limit bytes long. A larger version
// is refused with an error wrapping a *TooLargeError (and
// state.ErrTooLarge), decided from the blob's object header before any of
// its content is inflated: a remote may push a history holding a blob of
// gigabytes that compresses to a few megabytes, and no reader of a
// recorded version may take it whole into memory. It returns an error
// wrapping state.ErrNotFound when the commit or the path does not exist.
func (s *Store) ReadFile(commit, path string, limit int64) ([]byte, error) {
	c, err := s.resolve(commit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tree, err := s.commitTree(c)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	e, err := s.lookup(tree, path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := notAFile(e); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	data, err := s.readBlobLimit(e.Hash, limit)
	if err != nil {
		if _, _, serr := s.objects.Stat(e.Hash); errors.Is(err, state.ErrNotFound) && errors.Is(serr, odb.ErrNotFound) {
			// the tree names it: recorded, and lost since
			return nil, &MissingBlobError{Commit: c.String(), Path: path, Blob: e.Hash.String()}
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// BlobID returns the blob hash path had in commit, as ReadFile finds it but
// reading neither the blob nor more of each tree than the entry it needs, and
// caching none of them: a look at one path in each of many snapshots (the
// newest rejected version of each of 1 000 invalid files) decoded and kept
// 1 000 trees of 1 000 entries. It returns an error wrapping
// state.ErrNotFound when the commit or the path does not exist, or when
// path is a directory.
func (s *Store) BlobID(commit, path string) (string, error) {
	c, err := s.resolve(commit)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tree, err := s.commitTree(c)
	if err != nil {
		return "", fmt.Errorf("blob of %s: %w", path, err)
	}
	cur := treeEntry{Mode: filemode.Dir, Hash: tree}
	for _, name := range strings.Split(path, "/") {
		if !cur.IsDir() {
			return "", fmt.Errorf("blob of %s: %w", path, state.ErrNotFound)
		}
		t, raw, err := s.readObject(cur.Hash)
		if err != nil {
			return "", fmt.Errorf("blob of %s: %w", path, err)
		}
		if t != plumbing.TreeObject {
			return "", fmt.Errorf("blob of %s: %s is a %s, not a tree", path, cur.Hash, t)
		}
		e, ok, err := odb.FindRaw(raw, name)
		if err != nil {
			return "", fmt.Errorf("blob of %s: tree %s: %w", path, cur.Hash, err)
		}
		if !ok {
			return "", fmt.Errorf("blob of %s: %w", path, state.ErrNotFound)
		}
		cur = e
	}
	if err := notAFile(cur); err != nil {
		return "", fmt.Errorf("blob of %s: %w", path, err)
	}
	return cur.Hash.String(), nil
}

// NotAFileError is a path whose tree entry holds no file's content: a
// symbolic link or a submodule. strata's own refs never hold either, but a
// commit of the user's history (show or restore --rev HEAD) may; the link's
// target or the submodule's commit is never taken for a file's bytes. It
// wraps state.ErrNotFound: no version of the file is there.
type NotAFileError struct {
	Kind string // "a symbolic link", "a submodule"
}

func (e *NotAFileError) Error() string { return e.Kind + " there, not a file" }
func (e *NotAFileError) Unwrap() error { return state.ErrNotFound }

// notAFile says why a tree entry holds no file's content, or nil.
func notAFile(e treeEntry) error {
	switch {
	case e.IsDir():
		return fmt.Errorf("is a directory: %w", state.ErrNotFound)
	case e.Mode == filemode.Symlink:
		return &NotAFileError{Kind: "a symbolic link"}
	case e.Mode == filemode.Submodule:
		return &NotAFileError{Kind: "a submodule"}
	}
	return nil
}

// Files returns every file of commit's snapshot (recursively) as path -> blob
// hash. It returns an error wrapping state.ErrNotFound when commit does not
// exist.
func (s *Store) Files(commit string) (map[string]string, error) {
	return s.FilesWhere(commit, nil)
}

// TreeBoundError is a commit's tree that nests deeper, or names a path
// longer, than a kept path may (state.MaxPathDepth, state.MaxPathLen):
// walkFiles stops there. A fetched head is refused for it before anything
// is merged (UnsafeTreeError); a commit deeper in a history is not checked
// then, and is named here when a merge, a restore or a read reaches it
// (attack24: a peer's commit under a clean head, made the merge base, made
// every later sync fail naming neither the commit nor the remote).
type TreeBoundError struct {
	Role   string // what the commit is to a merge ("the merge base"), "" for "commit"
	Commit string // the commit whose tree it is, "" while the walk does not know it
	Path   string // where the bound is crossed (its first 200 bytes when Cut)
	Cut    bool
	Reason string
}

func (e *TreeBoundError) Error() string {
	where := shownPath(e.Path)
	if e.Cut {
		where += "..."
	}
	if e.Commit == "" {
		return where + ": " + e.Reason
	}
	role := e.Role
	if role == "" {
		role = "commit"
	}
	return fmt.Sprintf("%s %s: entry %s: %s", role, state.ShortID(e.Commit), where, e.Reason)
}

// inCommit names commit (and its role) in a *TreeBoundError err holds;
// other errors are returned as they are.
func inCommit(err error, role string, commit plumbing.Hash) error {
	var tb *TreeBoundError
	if !errors.As(err, &tb) || tb.Commit != "" {
		return err
	}
	named := *tb
	named.Role, named.Commit = role, commit.String()
	return &named
}

// walkFiles calls visit with the slash path and blob of every file of tree h,
// descending only into the directories descend admits (nil: all; "" is the
// root). Gitlinks are skipped: they name a commit of another repository, not
// a blob. A tree nested deeper, or a path longer, than state.CheckPath
// allows is an error: no kept path lies there, and a walk without a bound
// would cost time and memory with the square of the depth (checkFetched
// refuses such a remote head; this holds for a ref that has one anyway).
// Callers hold s.mu.
func (s *Store) walkFiles(h plumbing.Hash, descend func(dir string) bool, visit func(path string, e treeEntry)) error {
	var walk func(dir string, depth int, h plumbing.Hash) error
	walk = func(dir string, depth int, h plumbing.Hash) error {
		if descend != nil && !descend(dir) {
			return nil
		}
		if depth >= state.MaxPathDepth {
			return &TreeBoundError{Path: dir, Reason: fmt.Sprintf("trees nested more than %d deep", state.MaxPathDepth-1)}
		}
		entries, err := s.tree(h)
		if err != nil {
			return err
		}
		prefix := dir
		if prefix != "" {
			prefix += "/"
		}
		for _, e := range entries {
			if len(prefix)+len(e.Name) > state.MaxPathLen {
				return &TreeBoundError{Path: (prefix + e.Name)[:200], Cut: true, Reason: fmt.Sprintf("path longer than %d bytes", state.MaxPathLen)}
			}
			switch {
			case e.IsDir():
				if err := walk(prefix+e.Name, depth+1, e.Hash); err != nil {
					return err
				}
			case e.Mode != filemode.Submodule:
				visit(prefix+e.Name, e)
			}
		}
		return nil
	}
	return walk("", 0, h)
}

// translate keeps the state package's sentinels and path errors in a failed
// revision's error and gives any other error as text: no value of a library
// this package uses escapes it for callers to compare against. (Missing
// objects already wrap state.ErrNotFound: objectErr.)
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, state.ErrNotFound), errors.Is(err, state.ErrLocked):
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return errors.New(err.Error())
}

// now is the clock used when a change carries no time; tests may replace it.
var now = state.Now

var _ io.Closer = (*Store)(nil)
