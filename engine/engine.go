// Package engine is strata's core use-cases over one repository: read kept
// files safely, validate them with the rules that need history, record valid
// versions and quarantine invalid ones, and restore past versions. Commands,
// the watcher and the hooks all go through it, so every writer applies the
// same rules.
package engine

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Engine is one repository opened for strata work. It is not safe for
// concurrent use; the store's ref updates are safe across processes.
type Engine struct {
	cfg   *config.Config
	store *gitstore.Store
	opts  gitstore.Options // what store was opened with; the home view's too
	v     *validate.Validator
	Now   func() time.Time

	// realDirs are EvalSymlinks results by directory, for one command's
	// run; the lock is there because a watcher asks followDir from its own
	// goroutine beside the recorder's.
	realMu   sync.Mutex
	realDirs map[string]string
	// linksAbove are linkAbove's answers by folder, for the same run and
	// under the same lock as realDirs: a sync classifies each of 1 000
	// paths in one folder several times, and each asked lstat of every
	// folder above it.
	linksAbove map[string]string
	// realRels are realRel's answers by repo-relative folder, for the same
	// run and under the same lock: each classification asks realRel of a
	// path four or five times (ignored, privateBefore, hidden, linkedByGit,
	// tracked), and each answer joined, cleaned and made relative the same
	// two resolutions again (60% of a 1 000-path sync's classifying).
	realRels map[string]realFolder
	// absent are the repo-relative folders realFolder found not there,
	// under the top or a folder that resolves where it is named, for the
	// same run and under the same lock. Unlike realRels it is not an
	// answer: each later look asks lstat again (one call, not a
	// resolution from /), so a folder made since is resolved where it
	// leads.
	absent  map[string]bool
	realGen uint64 // counts forget's: an answer begun before one is not kept
	// classified are config.Classify's answers by path, for the same run
	// and under the same lock (classifyMemo).
	classified map[string]classified
	// rootDirs are the bases kept files are read beneath (the work tree,
	// the home directory), each opened once for one command's run or one
	// watcher batch (heldDir), under realMu; forget closes them, so a
	// work tree renamed while a watcher runs is opened anew at its name.
	rootDirs map[string]*os.File
	// nested is whether a directory holds a .git entry (nestedRepo), for
	// one command's run; config.Classify asks it, which a watcher calls
	// from its own goroutine beside the recorder's, hence the lock.
	nestedMu sync.Mutex
	nested   map[string]bool
	// rules are git's ignore and attribute rules as read (ignored, filtered).
	rules struct {
		sync.Mutex
		ig *gitstore.Ignores
		at *gitstore.Attributes
	}

	// index is the commit being made, for the pre-commit hook (OpenIndex):
	// nil for an engine of the work tree.
	index *indexView

	home    *Engine // the home view, opened on first use (home.go)
	display string  // in the home view: the kept "~/..." path shown for HomeName

	// mergingAgain is set while mergeKeptEdits runs: the records its
	// merges make (Put) do not run it again.
	mergingAgain atomic.Bool
	nwMu         sync.Mutex
	notWritten   []NotWritten // owed writes completed journals left undone (TakeNotWritten)
	pushed       []Pushed     // files pushes into this repository changed (TakePushed)
	writesHeld   atomic.Int32 // write-phase locks this engine holds (holdWrites)
	// privateSeen is, by path, the newest commit recording it that
	// NotePrivate last looked at, so a watcher's every rescan asks git
	// nothing again
	privateMu   sync.Mutex
	privateSeen map[string]string
	privateAt   map[string]string // by path, the state ref's head when NotePrivate looked
	// unwrittenNotes are the withheld notes a refusal could not write
	// (TakeUnwrittenNotes); the lock, as a watcher's sync and a command's
	// may share the engine.
	noteMu         sync.Mutex
	unwrittenNotes []*NoteError
}

// realDir resolves a directory's symlinks, remembering the answer: a command
// over 1 000 files in one folder resolves it once. A long-running caller
// (the watcher) calls forget before each batch, since directories may be
// replaced by symlinks while it runs.
func (e *Engine) realDir(dir string) (string, error) {
	e.realMu.Lock()
	defer e.realMu.Unlock()
	if r, ok := e.realDirs[dir]; ok {
		return r, nil
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if e.realDirs == nil {
		e.realDirs = map[string]string{}
	}
	e.realDirs[dir] = r
	return r, nil
}

// Forget drops remembered directory resolutions and git's rules as read,
// its own and the home view's.
func (e *Engine) Forget() {
	e.forget()
	if e.home != nil {
		e.home.forget()
	}
}

func (e *Engine) forget() {
	e.realMu.Lock()
	e.realDirs, e.linksAbove, e.realRels, e.absent = nil, nil, nil, nil
	e.realGen++
	e.releaseLocked()
	e.realMu.Unlock()
	e.nestedMu.Lock()
	e.nested = nil
	e.nestedMu.Unlock()
	e.store.ForgetConfig() // core.excludesFile, strata.keepPrivate… read again too
	e.rules.Lock()
	e.rules.ig, e.rules.at = e.store.Ignores(), e.store.Attributes()
	e.rules.Unlock()
	e.cfg.RefreshL2()
	// a classification begun before the rules and the L2 file were read
	// again is not remembered (classifyMemo)
	e.realMu.Lock()
	e.classified = nil
	e.realGen++
	e.realMu.Unlock()
}

// Open finds the repository containing dir and loads its configuration.
// It returns an error wrapping state.ErrNotRepo outside a git work tree.
func Open(dir string) (*Engine, error) {
	return open(dir, nil, gitstore.Options{})
}

// OpenWith is Open, the repository opened with o (a hook's shorter bound
// on fetching what a partial clone lacks).
func OpenWith(dir string, o gitstore.Options) (*Engine, error) {
	return open(dir, nil, o)
}

// open is Open, reading the configuration and the user's schema files from
// the index ix when it is not nil (OpenIndex).
func open(dir string, ix *indexView, o gitstore.Options) (*Engine, error) {
	st, err := gitstore.OpenWith(dir, o)
	if err != nil {
		return nil, err
	}
	if st.Root() == "" {
		return nil, fmt.Errorf("%s: %w (bare repositories have no kept files)", dir, state.ErrNotRepo)
	}
	opts := validate.Options{Root: st.Root(), GitDirs: []string{st.GitDir(), st.CommonDir()}}
	var cfg *config.Config
	if ix != nil {
		if err := ix.read(st); err != nil {
			return nil, err
		}
		if cfg, err = ix.config(st.Root()); err != nil {
			return nil, err
		}
		opts.Files, opts.WorkTreeToo = ix, ix.local
	}
	if cfg == nil {
		if cfg, err = config.Load(st.Root(), st.GitDir(), st.CommonDir()); err != nil {
			return nil, err
		}
	}
	opts.MaxSize = cfg.MaxSize
	v, err := validate.New(opts)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, store: st, opts: o, v: v, Now: state.Now, index: ix}
	e.rules.ig, e.rules.at = st.Ignores(), st.Attributes()
	cfg.Ignored = e.ignored             // git-ignored files are private (trust.go)
	cfg.PrivateBefore = e.privateBefore // and so are files HEAD's or an earlier HEAD's rules made private
	cfg.Filter = e.filtered             // and so are files git filters
	cfg.Tracked = e.tracked             // and untracked files only a .strata.yaml rule keeps
	cfg.Hidden = e.hidden               // and files whose local changes git is told to ignore
	cfg.Nested = e.nestedRel            // files of a submodule or a nested clone are its own
	cfg.LinkAbove = e.linkAbove         // and files through a link loop (loop -> .)
	cfg.LinkedByGit = e.linkedByGit     // and files behind a link a commit brought
	cfg.KeepPrivate = e.keepPrivate     // the user's git configuration may keep a private file
	cfg.Memo = classifyMemo{e}          // each answer judged once a run while what it was judged from stays
	cfg.FollowDir = e.followDir
	if ix == nil {
		// and files only staged, in no commit yet, that only a
		// .strata.yaml rule keeps; the pre-commit hook judges the commit
		// being made, which holds what the index stages
		cfg.Committed = e.committed
	}
	return e, nil
}

// followDir is config.Config.FollowDir: a symbolic link at rel is followed
// when a file behind it is one record reads (inside): the link leads to a
// directory of the work tree, outside every git directory and nested
// repository. status, init and the watcher then list and watch the files
// behind it under rel, as record keeps them.
func (e *Engine) followDir(rel string) bool {
	if strings.HasPrefix(rel, "~/") {
		return false
	}
	abs := e.cfg.Abs(rel)
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return false
	}
	real, err := e.realDir(abs)
	if err != nil {
		return false
	}
	return e.insideReal(config.Kept{Path: rel + "/x"}, real) == nil
}

// ignored and filtered are config.Config.Ignored and Filter: git's ignore
// and attribute rules as read since the engine opened or last forgot them
// (Forget: a watcher reads them again for each batch, so a .gitignore or a
// .gitattributes that makes a kept file private takes effect at once, not
// at the watcher's restart).
func (e *Engine) ignored(rel string) bool {
	return e.byNameOrReal(rel, (*gitstore.Ignores).Ignored)
}

// byNameOrReal asks git's rules as last read (has) about rel and, when a
// folder of it is a symbolic link to another folder of the work tree,
// about where it really is: true when either answers true.
func (e *Engine) byNameOrReal(rel string, has func(*gitstore.Ignores, string) bool) bool {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	if has(ig, rel) {
		return true
	}
	real, ok := e.realRel(rel)
	return ok && has(ig, real)
}

// RealRel is realRel: where rel really is when a folder of it is a
// symbolic link to another folder of the work tree; ok false when none is,
// or it leads outside.
func (e *Engine) RealRel(rel string) (string, bool) { return e.realRel(rel) }

// realRel is where the repo-relative rel really is, when a folder of it is
// a symbolic link to another folder of the work tree (a kept folder linked
// inside it, followDir): git judges the file there, and so does strata
// (attack20-ignore F3: `.claude/ctx -> ../secretdir` published
// secretdir/token.json once the .gitignore line for secretdir/ was gone).
// ok is false when no folder of rel is a link, or it leads outside.
func (e *Engine) realRel(rel string) (string, bool) {
	dir := path.Dir(rel)
	if dir == "." || strings.HasPrefix(rel, "~/") {
		return "", false
	}
	f, ok := e.realFolder(dir)
	if !ok {
		return "", false
	}
	real := path.Join(f.rel, path.Base(rel))
	if real == rel {
		return "", false
	}
	return real, true
}

// realFolder is where the repo-relative folder dir really is, relative to
// where the work tree really is; inside is false when it leads outside it.
type realFolder struct {
	rel    string
	inside bool
}

// realFolder resolves dir for realRel, remembered until forget; ok is false
// when dir or the work tree cannot be resolved (not remembered: a folder
// the command creates is resolved once it exists), or dir leads outside.
//
// A folder not there, under one that resolves where it is named, is noted
// absent: a sync receiving 1 000 files in a folder the clone lacks asked
// about 16 resolutions of it a path (0.9 s for the first sync against
// 0.25 s once the folder exists); each later look is one lstat.
func (e *Engine) realFolder(dir string) (realFolder, bool) {
	e.realMu.Lock()
	f, ok := e.realRels[dir]
	absent := e.absent[dir]
	gen := e.realGen
	e.realMu.Unlock()
	if ok {
		return f, f.inside
	}
	if absent {
		if e.notThere(dir) {
			return realFolder{}, false
		}
		e.realMu.Lock()
		delete(e.absent, dir) // made since: resolved below
		e.realMu.Unlock()
	}
	rd, err := e.realDir(e.cfg.Abs(dir))
	if err != nil {
		if e.notThere(dir) && e.namedHere(path.Dir(dir)) {
			remember(e, gen, &e.absent, dir, true)
		}
		return realFolder{}, false
	}
	root, err := e.realDir(e.cfg.Root)
	if err != nil {
		return realFolder{}, false
	}
	r, err := filepath.Rel(root, rd)
	f = realFolder{rel: filepath.ToSlash(r)}
	f.inside = err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
	remember(e, gen, &e.realRels, dir, f)
	return f, f.inside
}

// remember sets (*m)[k] to v under realMu, unless the engine forgot since
// gen (an answer begun before a forget is not kept).
func remember[T any](e *Engine, gen uint64, m *map[string]T, k string, v T) {
	e.realMu.Lock()
	defer e.realMu.Unlock()
	if e.realGen != gen {
		return
	}
	if *m == nil {
		*m = map[string]T{}
	}
	(*m)[k] = v
}

// notThere reports whether the repo-relative folder dir has no entry: lstat finds
// nothing (a symbolic link to nothing is an entry).
func (e *Engine) notThere(dir string) bool {
	_, err := os.Lstat(e.cfg.Abs(dir))
	return errors.Is(err, fs.ErrNotExist)
}

// namedHere reports whether the repo-relative folder dir is the top, or was
// found this run to resolve where it is named (realFolder), or to be absent
// under such a folder and still not there.
func (e *Engine) namedHere(dir string) bool {
	if dir == "." {
		return true
	}
	if f, ok := e.realFolder(dir); ok {
		return f.rel == dir
	}
	e.realMu.Lock()
	defer e.realMu.Unlock()
	return e.absent[dir] // realFolder has just found it still not there
}

// linkedByGit is config.Config.LinkedByGit: the first symbolic link git
// tracks met on the way from rel's name to the folder its file is in — a
// folder of rel, or a link met while resolving one (.claude/memory ->
// ../mem, the user's own, then mem -> notes, a commit's:
// attack28-recheck2 N1b) — when that folder is another of the work tree;
// "" when none is git's. Only a path whose folder leads elsewhere is
// walked (realRel remembers each folder's answer).
func (e *Engine) linkedByGit(rel string) string {
	if _, ok := e.realRel(rel); !ok {
		return ""
	}
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	todo := strings.Split(path.Dir(rel), "/") // the folders still to walk
	done := ""                                // the walked ones, no link among them
	for hops := 0; len(todo) > 0; {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			// as the kernel goes: to the parent of the folder reached so
			// far, after the links before it (a link's target
			// ../mem/../notes2 passes through mem)
			if done == "" {
				return "" // out of the work tree: refused elsewhere
			}
			if done = path.Dir(done); done == "." {
				done = ""
			}
			continue
		}
		next := path.Join(done, seg)
		fi, err := os.Lstat(e.cfg.Abs(next))
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if ig.Tracked(next) || e.nestedRel(next) != "" {
			// git's: this repository's index has it, or a submodule's or
			// a nested clone's commit brought it (that repository's
			// link, which its update or a pushed gitlink can move:
			// attack29 F1)
			return next
		}
		target, err := os.Readlink(e.cfg.Abs(next))
		if hops++; err != nil || hops > 40 {
			return ""
		}
		t := filepath.ToSlash(target)
		if filepath.IsAbs(target) {
			r, err := filepath.Rel(e.cfg.Root, target)
			if err != nil {
				return ""
			}
			t, done = filepath.ToSlash(r), ""
		}
		// the target's names walked one by one from the link's folder
		// (done), its ".." included, each link on the way asked about
		todo = append(strings.Split(t, "/"), todo...)
	}
	return ""
}

// privateBefore is config.Config.PrivateBefore: why rel, which the work
// tree's rules neither ignore nor filter, was private by the .gitignore or
// .gitattributes files of HEAD or an earlier HEAD
// (gitstore.Ignores.IgnoredBefore, FilteredBefore), judged at its own path
// and where it really is.
func (e *Engine) privateBefore(rel string) string {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	names := []string{rel}
	if real, ok := e.realRel(rel); ok {
		names = append(names, real)
	}
	for _, p := range names {
		if why := ig.Unread(p); why != "" {
			return config.WhyUnread(why)
		}
	}
	for _, p := range names {
		if at := ig.IgnoredBefore(p); at != "" {
			if why, ok := gitstore.RulesUnreadAt(at); ok {
				return config.WhyIgnoreUnread(why)
			}
			return config.WhyIgnoredBefore(at)
		}
	}
	for _, p := range names {
		if at, driver := ig.FilteredBefore(p); driver != "" {
			return config.WhyFilteredBefore(at, driver)
		} else if at != "" {
			return config.WhyFilterUnread(at)
		}
	}
	return ""
}

// tracked is config.Config.Tracked: the index holds rel — or, when a
// folder of it is a symbolic link to another folder of the work tree,
// the path where it really is, and only that (git shares that file
// already). git tracks nothing beyond a symbolic link: an index entry
// under the link's name is one git sees deleted, so it keeps nothing
// (attack28 F1: config/ replaced by a link to secrets/, the untracked
// password there was kept by the template's stale entry, and published).
func (e *Engine) tracked(rel string) bool {
	return e.whereItIs(rel, (*gitstore.Ignores).Tracked)
}

// committed is config.Config.Committed: HEAD's commit holds rel where git
// tracks it, judged where it really is as tracked is.
func (e *Engine) committed(rel string) bool {
	return e.whereItIs(rel, func(ig *gitstore.Ignores, p string) bool {
		return ig.Tracked(p) && ig.Committed(p)
	})
}

// whereItIs asks git's rules as last read (has) about where rel really
// is: rel itself, or, when a folder of it is a symbolic link to another
// folder of the work tree, that path alone.
func (e *Engine) whereItIs(rel string, has func(*gitstore.Ignores, string) bool) bool {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	if real, ok := e.realRel(rel); ok {
		return has(ig, real)
	}
	return has(ig, rel)
}

// IndexNote says why git's index was asked of git rather than read
// in-process (a split index, a sparse index), "" when it was not; read is
// false when it could not be read at all, so no file counts as tracked
// (doctor).
func (e *Engine) IndexNote() (note string, read bool) {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	return ig.IndexNote()
}

// RulesUnread says why git's rules of HEAD and of the earlier HEADs strata
// kept cannot be read, nil when they can (a *gitstore.BrokenRefError in its
// chain for a broken ref); kept is true when the record on
// refs/strata/gitrules is what cannot be read (doctor).
func (e *Engine) RulesUnread() (kept bool, err error) {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	err = ig.RulesErr()
	if err == nil {
		return false, nil
	}
	return e.store.KeptRulesUnread(err), err
}

// hidden is config.Config.Hidden: the local-changes flag (skip-worktree,
// assume-unchanged) of rel's index entry, or of the entry where it really
// is when a folder of it is a symbolic link to another folder of the work
// tree.
func (e *Engine) hidden(rel string) string {
	e.rules.Lock()
	ig := e.rules.ig
	e.rules.Unlock()
	if flag := ig.Hidden(rel); flag != "" || ig.Tracked(rel) {
		return flag
	}
	if real, ok := e.realRel(rel); ok {
		return ig.Hidden(real)
	}
	return ""
}

func (e *Engine) filtered(rel string) string {
	e.rules.Lock()
	at := e.rules.at
	e.rules.Unlock()
	return at.Filter(rel)
}

// nestedRel is config.Config.Nested: nestedRepo of a repo-relative path's
// folder, taken as named (inside judges where symbolic links lead).
func (e *Engine) nestedRel(rel string) string {
	dir := path.Dir(rel)
	if dir == "." || strings.HasPrefix(rel, "~/") {
		return ""
	}
	return e.nestedRepo(filepath.Join(e.cfg.Root, filepath.FromSlash(dir)), e.cfg.Root)
}

// linkAbove is config.Config.LinkAbove: the reason for the first folder of
// a repo-relative path's folders, taken as named, that is a symbolic link
// to the folder holding it or to one above it (loop -> ., up -> ..). Seen
// through it, the work tree's own .git looks like a nested repository's,
// which is not why such a path is not kept (attack25 hostile observation).
func (e *Engine) linkAbove(rel string) string {
	if strings.HasPrefix(rel, "~/") {
		return ""
	}
	folder := path.Dir(rel)
	e.realMu.Lock()
	defer e.realMu.Unlock()
	if why, ok := e.linksAbove[folder]; ok {
		return why
	}
	why := e.findLinkAbove(folder)
	if e.linksAbove == nil {
		e.linksAbove = map[string]string{}
	}
	e.linksAbove[folder] = why
	return why
}

// findLinkAbove is linkAbove's answer for the folder holding a path.
func (e *Engine) findLinkAbove(folder string) string {
	dir := e.cfg.Root
	for _, el := range strings.Split(folder, "/") {
		if el == "." {
			return ""
		}
		d := filepath.Join(dir, el)
		if fi, err := os.Lstat(d); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			dir = d
			continue
		}
		real, err1 := filepath.EvalSymlinks(d)
		holder, err2 := filepath.EvalSymlinks(dir)
		target, err3 := os.Readlink(d)
		if err1 != nil || err2 != nil || err3 != nil {
			return ""
		}
		if real == holder || strings.HasPrefix(holder, real+string(filepath.Separator)) || real == string(filepath.Separator) {
			link, _ := filepath.Rel(e.cfg.Root, d)
			return config.WhyLinkAbove(filepath.ToSlash(link), target)
		}
		dir = d
	}
	return ""
}

// Sudo is the owner's uid when strata runs as root through sudo on that
// user's repository (gitstore Store.Sudo), 0 otherwise: then nothing is
// written in the repository, and a command that would write refuses.
func (e *Engine) Sudo() int { return e.store.Sudo() }

// Shared is the repository's core.sharedRepository, which gives every file
// and directory strata creates in the git directory its mode (gitperm).
func (e *Engine) Shared() gitperm.Shared { return e.store.Shared() }

// File is a kept file as read from disk.
type File struct {
	config.Kept
	Content []byte
	Exists  bool
}

// ID is the blob id of the file's content, "" when the file does not
// exist: equal to the recorded snapshot's entry for its path (a missing
// entry reads "") exactly when the file is as recorded.
func (f File) ID() string {
	if !f.Exists {
		return ""
	}
	return gitstore.BlobHash(f.Content)
}

// ErrNotKept is returned for a path no rule keeps.
var ErrNotKept = errors.New("not a kept file")

// ErrBadName is returned for a path a rule would keep but for a control
// character in its name (config.BadName): an invalid file, as validate
// reports it, rather than a path strata has nothing to do with.
var ErrBadName = errors.New("file name contains a control character")

// PathError is a refused path: outside the kept classes, escaping the
// repository, or not a regular file.
type PathError struct {
	Path   string
	Reason string
	Err    error // ErrNotKept, or nil
	IO     bool  // refused because of what is on disk (a symlink out, not a regular file), not how it was named
	// Absent: a kept path git keeps out of the work tree (skip-worktree:
	// outside a sparse checkout's cone), named rightly; a check that
	// failed, not a usage error
	Absent bool
}

func (e *PathError) Error() string { return state.ShownPath(e.Path) + ": " + e.Reason }
func (e *PathError) Unwrap() error { return e.Err }

// Resolve turns a user-given name, relative to cwd as in git, into a kept
// path; from a cwd outside the work tree (a git dir kept apart from it,
// core.worktree or $GIT_WORK_TREE, strata run where .git is), a relative
// name is taken from the top of the work tree, as git takes it then. Names
// that leave the work tree through "..", absolute names (other than the
// home-directory files strata keeps) and paths no rule keeps are refused
// with a *PathError.
func (e *Engine) Resolve(cwd, name string) (config.Kept, error) {
	if strings.ContainsRune(name, 0) {
		return config.Kept{}, &PathError{Path: name, Reason: "name contains a NUL byte"}
	}
	var rel string
	switch {
	case strings.HasPrefix(name, "~/"):
		rel = filepath.ToSlash(filepath.Clean(name))
	case filepath.IsAbs(name):
		rel = e.cfg.Rel(cwd, name)
		if !strings.HasPrefix(rel, "~/") {
			return config.Kept{}, &PathError{Path: name, Reason: "absolute paths are refused; name the file relative to the current directory"}
		}
	default:
		if real, err := e.realDir(cwd); err == nil {
			cwd = real // the root has its symlinks resolved too
		}
		if r, err := filepath.Rel(e.cfg.Root, cwd); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			cwd = e.cfg.Root
		}
		r, err := filepath.Rel(e.cfg.Root, filepath.Join(cwd, name))
		rel = filepath.ToSlash(r)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return config.Kept{}, &PathError{Path: name, Reason: `".." leaves the repository`}
		}
	}
	k, ok := e.cfg.Classify(rel)
	if !ok && e.cfg.BadName(rel) {
		return config.Kept{}, &PathError{Path: rel, Reason: BadName(rel).Message, Err: ErrBadName}
	}
	if !ok {
		// a private file a rule would keep says why, and what keeps it,
		// as status says it (attack26 recheck F7); a name no file has (a
		// typo) is not offered a command keeping it
		if why := e.cfg.Private(rel); why != "" && e.onDiskAt(rel) {
			why, then := Private{Path: rel, Reason: why}.NotKept()
			if then != "" {
				why += "; " + then
			}
			return config.Kept{}, &PathError{Path: rel, Reason: why, Err: ErrNotKept}
		}
		if why := e.cfg.Private(rel); why == config.WhyHidden(gitstore.SkipWorktree) {
			return config.Kept{}, &PathError{Path: rel, Reason: e.skipWorktreeAbsent(rel), Err: ErrNotKept, Absent: true}
		}
		return config.Kept{}, &PathError{Path: rel, Reason: "not a kept file (see strata status and .strata.yaml)", Err: ErrNotKept}
	}
	return k, nil
}

// ResolveRecorded is Resolve for the commands that only read the history
// (log, show, diff, blame): a path no rule keeps now — made private, its
// rule removed, ignored on the branch checked out — whose versions the state
// ref (or the rejected ref) records is read as recorded, with the class and
// schema of its newest entry. Writing commands keep Resolve's refusal.
func (e *Engine) ResolveRecorded(cwd, name string) (config.Kept, error) {
	k, err := e.Resolve(cwd, name)
	var pe *PathError
	if err == nil || !errors.As(err, &pe) || !errors.Is(err, ErrNotKept) && !errors.Is(err, ErrBadName) {
		return k, err
	}
	for _, log := range []func(state.LogQuery) ([]state.Entry, error){e.Log, e.RejectedLog} {
		if ents, lerr := log(state.LogQuery{Path: pe.Path, Limit: 1}); lerr == nil && len(ents) > 0 {
			return config.Kept{Path: pe.Path, Class: ents[0].Class, Schema: ents[0].Schema}, nil
		}
	}
	return k, err
}

// inside reports whether the directory holding a kept file resolves, through
// any symlinks, to a place inside the work tree (or the home directory for
// "~/" paths) and outside every git directory, so strata never reads or
// writes outside them, nor inside .git: a committed symlink `g -> .git`
// stays inside the work tree, yet what a rule `g/*` would keep is git's own.
func (e *Engine) inside(k config.Kept) error {
	base := e.keptBase(k)
	dir := filepath.Dir(e.cfg.Abs(k.Path))
	for {
		real, err := e.realDir(dir)
		if err == nil {
			return e.insideReal(k, real)
		}
		if !errors.Is(err, os.ErrNotExist) || dir == base || len(dir) <= len(base) {
			return nil
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			// there, yet it does not resolve: a symbolic link to nothing. Its
			// files are neither absent (a deletion to record) nor writable.
			return &PathError{Path: k.Path, Reason: "its directory is a symbolic link that leads nowhere; not followed", IO: true}
		}
		dir = filepath.Dir(dir) // not created yet: check the nearest existing parent
	}
}

// insideReal is inside's judgement of real, where the directory holding
// the kept file k really is (all symbolic links resolved).
func (e *Engine) insideReal(k config.Kept, real string) error {
	base := e.keptBase(k)
	rb, _ := e.realDir(base)
	if rb == "" {
		rb = base
	}
	if real != rb && !strings.HasPrefix(real, rb+string(filepath.Separator)) {
		return &PathError{Path: k.Path, Reason: "its directory is a symbolic link out of the repository; not followed", IO: true}
	}
	if e.inGitDir(real, rb, base == e.cfg.Root) {
		return &PathError{Path: k.Path, Reason: "its directory is a symbolic link into a .git directory; not followed", IO: true}
	}
	if base == e.cfg.Root {
		if repo := e.nestedRepo(real, rb); repo != "" {
			return &PathError{Path: k.Path, Reason: "it is inside another git repository (" + repo + " has its own .git, a submodule or a clone); its files are that repository's", IO: true}
		}
	}
	return nil
}

// holdsRepo reports whether dir holds a repository git would take for one
// (and then not descend into): a .git folder with HEAD, objects and refs,
// or a .git file starting "gitdir: ". An empty or broken .git is an
// ordinary name to git, whose files it stages, and so to strata.
func holdsRepo(dir string) bool {
	g := filepath.Join(dir, ".git")
	st, err := os.Lstat(g)
	switch {
	case err != nil:
		return false
	case st.IsDir():
		for _, n := range []string{"HEAD", "objects", "refs"} {
			if _, err := os.Stat(filepath.Join(g, n)); err != nil {
				return false
			}
		}
		return true
	case st.Mode().IsRegular():
		f, err := openRegular(g)
		if err != nil {
			return false
		}
		defer f.Close()
		head := make([]byte, 8)
		n, _ := io.ReadFull(f, head)
		return string(head[:n]) == "gitdir: "
	}
	return false
}

// nestedRepo returns the directory, relative to the work tree's real root
// rb, of the outermost repository nested in the work tree (a submodule, a
// clone inside it: a directory holding a .git entry) that holds the real
// directory dir, or "" when none does. strata keeps none of its files:
// they are another repository's, which its own git ignores or tracks, and
// restoring or syncing them would write into it (config.Config.Nested
// makes them private: nestedRel).
func (e *Engine) nestedRepo(dir, rb string) string {
	sep := string(filepath.Separator)
	if !strings.HasPrefix(dir, rb+sep) {
		return ""
	}
	rel := strings.Split(strings.TrimPrefix(dir, rb+sep), sep)
	e.nestedMu.Lock()
	defer e.nestedMu.Unlock()
	for i := range rel {
		d := filepath.Join(rb, filepath.Join(rel[:i+1]...))
		has, ok := e.nested[d]
		if !ok {
			has = holdsRepo(d)
			if e.nested == nil {
				e.nested = map[string]bool{}
			}
			e.nested[d] = has
		}
		if has {
			return filepath.ToSlash(filepath.Join(rel[:i+1]...))
		}
	}
	return ""
}

// keptBase is the directory k's path is under: the work tree, or the home
// directory for "~/" paths.
func (e *Engine) keptBase(k config.Kept) string {
	if strings.HasPrefix(k.Path, "~/") {
		return e.cfg.Home
	}
	return e.cfg.Root
}

// inGitDir reports whether the real directory dir is this repository's git
// directory or common directory, or lies under one, or, in the work tree
// (below its real root rb), under any directory a tree entry could not name
// (state.CheckName: .git in any spelling git refuses, a nested repository's
// included).
func (e *Engine) inGitDir(dir, rb string, inTree bool) bool {
	sep := string(filepath.Separator)
	for _, g := range []string{e.store.GitDir(), e.store.CommonDir()} {
		if g == "" {
			continue
		}
		if real, err := e.realDir(g); err == nil {
			g = real
		}
		if dir == g || strings.HasPrefix(dir, g+sep) {
			return true
		}
	}
	if !inTree || dir == rb {
		return false
	}
	for _, el := range strings.Split(strings.TrimPrefix(dir, rb+sep), sep) {
		if state.CheckName(el) != nil {
			return true
		}
	}
	return false
}

// Read reads a kept file from disk without following symlinks. A file that
// does not exist is returned with Exists false. A symlink, a non-regular
// file, a file larger than max_size or an unreadable file is a problem.
func (e *Engine) Read(k config.Kept) (File, *state.Problem) {
	f := File{Kept: k}
	if err := e.inside(k); err != nil {
		return f, &state.Problem{Path: k.Path, Message: strings.TrimPrefix(err.Error(), k.Path+": ")}
	}
	name := e.cfg.Abs(k.Path)
	st, err := os.Lstat(name)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return f, nil
	case errors.Is(err, syscall.ENAMETOOLONG) && len(name) >= pathMax:
		// listed by the scan (config.readDirLong) but past what a path
		// can name: reported, never left out (attack36 M4)
		return f, &state.Problem{Path: k.Path, Message: fmt.Sprintf("cannot stat: its absolute name is %d bytes, longer than PATH_MAX (%d); move the work tree to a shorter path", len(name), pathMax)}
	case err != nil:
		return f, &state.Problem{Path: k.Path, Message: "cannot stat: " + errText(err)}
	case st.Mode()&os.ModeSymlink != 0:
		return f, &state.Problem{Path: k.Path, Message: "is a symbolic link; not followed"}
	case !st.Mode().IsRegular():
		return f, &state.Problem{Path: k.Path, Message: state.NotRegular(st.Mode())}
	case st.Size() > e.cfg.MaxSize:
		return f, &state.Problem{Path: k.Path, Message: fmt.Sprintf("file is %d bytes, larger than max_size %d; not stored", st.Size(), e.cfg.MaxSize)}
	}
	if beforeRead != nil {
		beforeRead(k)
	}
	// The checks above were of names; the read resolves the path again,
	// beneath the work tree, and judges where it found the file (a folder
	// may have been swapped for a symbolic link out of the tree since).
	data, err := e.tree(k).ReadFile(strings.TrimPrefix(k.Path, "~/"), e.cfg.MaxSize)
	var pe *PathError
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return f, nil
	case errors.Is(err, state.ErrOutside):
		return f, &state.Problem{Path: k.Path, Message: err.Error()}
	case errors.As(err, &pe):
		return f, &state.Problem{Path: k.Path, Message: pe.Reason}
	case errors.Is(err, state.ErrNotRegular): // swapped for a pipe or a link since the Lstat
		return f, &state.Problem{Path: k.Path, Message: "not a regular file"}
	case errors.Is(err, state.ErrTooLarge): // within max_size at the Lstat
		return f, &state.Problem{Path: k.Path, Message: fmt.Sprintf("file grew past max_size %d while read; not stored", e.cfg.MaxSize)}
	case err != nil:
		return f, &state.Problem{Path: k.Path, Message: "cannot read: " + errText(err)}
	}
	f.Content, f.Exists = data, true
	return f, nil
}

// beforeRead, when set by a test, runs between Read's checks of a kept
// file's path and its read: where a racing process swaps a folder.
var beforeRead func(k config.Kept)

// tree is the door a kept file of k is read through: its base (the work
// tree, or the home directory for "~/" paths), judged as inside judges it.
func (e *Engine) tree(k config.Kept) state.Tree {
	base := e.keptBase(k)
	rb, _ := e.realDir(base)
	if rb == "" {
		rb = base
	}
	return state.Tree{Root: base, Real: rb, Dir: e.heldDir(base), Judge: func(real string) error { return e.insideReal(k, real) }}
}

// Release closes the work tree's root (and the home directory) held open
// for a batch of reads (heldDir), its own and the home view's: the next
// read opens it again at its name. Forget releases too. A long-running
// caller that does not Forget (the watcher's sync engine) releases after
// each round, so that a work tree renamed meanwhile is not read through a
// descriptor of its old place for ever.
func (e *Engine) Release() {
	for _, v := range []*Engine{e, e.home} {
		if v == nil {
			continue
		}
		v.realMu.Lock()
		v.releaseLocked()
		v.realMu.Unlock()
	}
}

func (e *Engine) releaseLocked() {
	for _, f := range e.rootDirs {
		f.Close() // a read beneath it still running finishes first (state.Tree.Dir)
	}
	e.rootDirs = nil
}

// heldDir is base opened once, for the reads of one command's run (or of
// one watcher batch: Forget closes it): a command reading 1 000 kept files
// opens and closes the work tree's root once, not at each read. nil when
// it cannot be opened: each read then opens it, and says why.
func (e *Engine) heldDir(base string) *os.File {
	e.realMu.Lock()
	defer e.realMu.Unlock()
	if f, ok := e.rootDirs[base]; ok {
		return f
	}
	f, err := state.OpenDir(base)
	if err != nil {
		return nil
	}
	if e.rootDirs == nil {
		e.rootDirs = map[string]*os.File{}
	}
	e.rootDirs[base] = f
	return f
}

// pathMax is Linux's PATH_MAX: the longest name a system call takes,
// its final NUL byte included.
const pathMax = 4096

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// UsesHistory reports whether Check looks at the last recorded version of
// a file of k's class: the append-only classes and the initiative's status
// machine. Every caller of Check reads that version only when it does:
// for the other classes (the workflow state the watcher records at every
// change, most of what validate and status check) it is never read.
func UsesHistory(k config.Kept) bool {
	return k.Class.Immutable() || k.Class == state.ClassInitiative
}

// Check validates a file's content with its schema and, against prev (the
// last recorded version, nil when none), the rules that need history: the
// initiative status machine and the append-only rule of Phase Outcomes.
// A decision resolution is also checked against its Phase Outcome and the
// other resolutions of its decision (see checkResolution). The rules
// themselves are package phase's; validate decodes the documents for them.
func (e *Engine) Check(f File, prev []byte) state.Problems {
	var problems state.Problems
	if f.Exists {
		problems = e.v.ValidateAs(f.Path, f.Content, f.Schema, f.Format)
	}
	return e.checkRest(f, prev, problems)
}

// checkRest is Check after the schema check of an existing file (the
// Validator's problems, nil for a missing file): the rules of its class,
// against prev.
func (e *Engine) checkRest(f File, prev []byte, problems state.Problems) state.Problems {
	if !f.Exists {
		return phase.AppendOnly(f.Class, f.Path, prev, nil, false)
	}
	if f.Class == state.ClassDecisionResolution && !problems.Invalid() {
		problems = append(problems, e.checkResolution(f)...)
	}
	if problems.Invalid() || prev == nil {
		return problems
	}
	if ps := phase.AppendOnly(f.Class, f.Path, prev, f.Content, true); ps != nil {
		return append(problems, ps...)
	}
	if f.Class == state.ClassInitiative {
		problems = append(problems, validate.CheckTransition(f.Path, prev, f.Content)...)
	}
	return problems
}

// Outcome is what recording one path did.
type Outcome struct {
	Path     string
	Entry    *state.Entry   // the recorded change; nil when unchanged, skipped or rejected
	Rejected *state.Entry   // the quarantined version on the rejected ref
	Problems state.Problems // why it was rejected or skipped; warnings of a recorded file
	Written  bool           // a restore changed the file on disk
	Removed  bool           // that change removed it (not recorded at the point restored)
	// Saved is the unrecorded version a restore recorded before replacing
	// it (on the rejected ref when SavedRejected).
	Saved         *state.Entry
	SavedRejected bool
	// savedEarlier: Saved is a rejected version an earlier record kept
	// (the restore found it there rather than saving it)
	savedEarlier bool
	// Revived is set when a restore of the last recorded version brought
	// back a file whose deletion was recorded: the version it wrote is the
	// one before that deletion.
	Revived *Revived
	// Held is set when restore --all left the file as it is (planAll):
	// its version on disk is invalid (Held says where that version is
	// kept, and Problems why it is invalid), or what it would have written
	// there changes what Claude Code runs (Held says what).
	Held *Held
	// Late is set when a restore left the file alone because it changed on
	// disk after the restore saved it (its Problems say so): that newer
	// version is recorded next, as any edit.
	Late bool
	// WaitsForLine is set when the record left the file because a merge
	// with another version waits for the line still being appended to it
	// (its Problems say so): merged and recorded once the line ends, or
	// after UnendedWait (the watcher holds it as long).
	WaitsForLine bool

	// read and seen: Record read the file, and found the version seen (a
	// blob id, "" when absent). unread is why it could not read it as a
	// regular file within max_size (its Problems say so too): that version
	// is in no ref.
	read   bool
	seen   string
	unread *state.Problem
	// unmerged: left unrecorded because its merge with another version is
	// owed (waiting for a line, or not to be made yet): not seen as saved
	unmerged bool
}

// Invalid reports whether the outcome is a rejection or a refusal.
func (o Outcome) Invalid() bool { return o.Problems.Invalid() }

// Unread reports whether Record could not read the file as a regular file
// within max_size (unreadable, a symbolic link, too large...; its Problems
// say why): no version of it was judged.
func (o Outcome) Unread() bool { return o.unread != nil }

// Head returns the state ref's head commit, or "" when nothing is recorded yet.
func (e *Engine) Head() (string, error) {
	h, err := e.store.Head(e.store.StateRef())
	if errors.Is(err, state.ErrNotFound) {
		return "", nil
	}
	return h, err
}

// HeadGone reports whether the state ref points at a commit this
// repository does not hold (its objects removed: a `git gc --prune=now`
// run beside a record), and then the newest commit of the ref's reflog
// that it does hold ("" when none).
func (e *Engine) HeadGone() (gone bool, lastGood string) {
	head, err := e.Head()
	if err != nil || head == "" || e.store.HasCommit(head) {
		return false, ""
	}
	lastGood, _ = e.store.LastInLog(e.store.StateRef())
	return true, lastGood
}

// recorded returns the snapshot of the state ref's head (path -> blob id).
func (e *Engine) recorded() (string, map[string]string, error) {
	head, err := e.Head()
	if err != nil || head == "" {
		return head, map[string]string{}, err
	}
	files, err := e.store.Files(head)
	var unsafe *gitstore.UnsafeTreeError
	var bound *gitstore.TreeBoundError
	if errors.As(err, &unsafe) || errors.As(err, &bound) {
		// a head no sync would take, moved to by a push into this
		// repository not taken yet: the files here follow the head strata
		// moved the ref to, and the next command puts the ref back there
		// (takePush); read as that head meanwhile, so that status,
		// validate and record reach it (attack40c M1: every command exited
		// 3 reading the pushed tree, and none put it back)
		if from, ok := e.pushedFrom(); ok {
			files, err := e.filesAt(from)
			return from, files, err
		}
	}
	if errors.Is(err, state.ErrNotFound) {
		// the ref names a commit the store lacks (git gc --prune=now beside
		// a writer): the history is damaged, not empty; nothing is read as
		// "not recorded" or built on it (attack19 verify N4)
		err = &gitstore.DamagedError{Ref: e.store.StateRef(), Object: head}
	}
	return head, files, err
}

// AllPaths lists every kept path on disk or in the recorded snapshot.
func (e *Engine) AllPaths() ([]config.Kept, error) {
	if e.display != "" {
		return e.homeAllPaths(), nil // the home view keeps one file (home.go)
	}
	onDisk, err := e.cfg.Scan()
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	_, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	return e.allPaths(onDisk, files), nil
}

// allPaths is AllPaths over a scan of the disk and the head's snapshot
// already read.
func (e *Engine) allPaths(onDisk []string, files map[string]string) []config.Kept {
	seen := map[string]bool{}
	var out []config.Kept
	add := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		if k, ok := e.cfg.Classify(p); ok {
			out = append(out, k)
		}
	}
	for _, p := range onDisk {
		add(p)
	}
	recordedPaths := make([]string, 0, len(files))
	for p := range files {
		recordedPaths = append(recordedPaths, p)
	}
	sort.Strings(recordedPaths)
	for _, p := range recordedPaths {
		add(p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// invalidVersion is one version for quarantine: the change, and where its
// Outcome (with its problems) is in the caller's list.
type invalidVersion struct {
	at int
	ch state.Change
}

// quarantine keeps invalid versions on the rejected ref, each with the
// problem lines of its Outcome out[v.at] in its commit message, all written
// together (gitstore.RejectEach), and sets each Outcome's Rejected.
func (e *Engine) quarantine(out []Outcome, vs []invalidVersion) error {
	if len(vs) == 0 {
		return nil
	}
	rs := make([]gitstore.Rejection, len(vs))
	for i, v := range vs {
		ps := out[v.at].Problems
		lines := make([]string, len(ps))
		for j, p := range ps {
			lines[j] = p.Error()
		}
		rs[i] = gitstore.Rejection{Change: v.ch, Problems: lines}
	}
	ents, err := e.store.RejectEach(rs)
	if err != nil {
		if len(vs) == 1 {
			return fmt.Errorf("quarantine %s: %w", vs[0].ch.Path, err)
		}
		return fmt.Errorf("quarantine %d invalid versions: %w", len(vs), err)
	}
	for i, v := range vs {
		out[v.at].Rejected = &ents[i]
	}
	return nil
}

// alreadyRejected reports whether the newest version of ch's path on the
// rejected ref is this exact version, so re-running record on unchanged
// invalid files does not pile up identical quarantine commits.
func (e *Engine) alreadyRejected(ch state.Change) bool {
	id := ""
	if !ch.Deleted {
		id = gitstore.BlobHash(ch.Content)
	}
	return e.rejectedVersion(ch.Path, id) != nil
}

// rejectedVersion is the rejected ref's entry of path when its newest
// version there is the one given (a blob id, "" for a deletion), nil
// otherwise. It asks the path's own history, not the ref's head: with
// several invalid files the head holds only the last of them, and each
// run quarantined all again.
func (e *Engine) rejectedVersion(path, id string) *state.Entry {
	ents, err := e.store.Log(e.store.RejectedRef(), gitstore.LogQuery{Path: path, Limit: 1})
	if err != nil || len(ents) == 0 {
		return nil
	}
	got, err := e.store.BlobID(ents[0].Commit, path)
	if id == "" && errors.Is(err, state.ErrNotFound) || err == nil && got == id {
		return &ents[0]
	}
	return nil
}

// WriteStep, set by tests only, is called at the named steps of a single
// write (write: Put, a journal's completion), each followed by a space and
// the file's path: "check" before the file on disk is compared with the
// version the caller expects, "added" once the new version waits in its
// temp file and the writes lock is held (lockWrites), right before the
// last check and the rename, "written" once it is in place.
var WriteStep func(step string)

// write replaces k's file by data, atomically, only while it is still the
// version expect (a blob id; "" meaning absent), as a batch of one checkout
// (Checkouts.Add and Commit make the same checks): the file is compared
// with expect by content, its stat, taken before that read, is compared
// again right before the rename (a change in between counts as an edit),
// and a file expected absent is created only if nothing has appeared at its
// name up to that moment; the last check and the rename are made holding
// the lock every strata writer takes for them (lockWrites). When the file
// is not, or no longer, expect, it
// writes nothing and returns false. A new version of the L2 file that is
// expect's content followed by more bytes (an item added at the end of
// MEMORY.md) is appended in place instead (appendInPlace: a crash in the
// write can leave part of the line, which still reads as Markdown; any
// other file is only ever replaced whole), so that a writer holding
// the file open (`>>`, Node's fs.appendFile) loses nothing; any other
// replaces the file by a swap, and the file swapped out is looked at
// again after displacedSettle: written in place meanwhile, the swap is
// undone and false returned. The file keeps its mode; a symbolic
// link (or any file not regular) is never written through: a *PathError.
// The directory is opened once, judged where it really is (DirOK), and
// written through that handle, so a folder swapped for a link into .git or
// out of the work tree after the check is never written through.
func (e *Engine) write(k config.Kept, data []byte, expect string) (bool, error) {
	if err := e.inside(k); err != nil {
		return false, err
	}
	if WriteStep != nil {
		WriteStep("check " + k.Path)
	}
	name := e.cfg.Abs(k.Path)
	st, err := os.Lstat(name)
	var cur []byte // the content on disk, expect's
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		if expect != "" {
			return false, nil // removed meanwhile
		}
		st = nil
	case err == nil && !st.Mode().IsRegular():
		return false, &PathError{Path: k.Path, Reason: notWritable(st.Mode()), IO: true}
	default:
		// st, taken before the content is read, is what the rename is
		// checked against: a change in between counts as an edit.
		f, prob := e.Read(k)
		if prob != nil {
			return false, prob
		}
		if f.ID() != expect {
			return false, nil
		}
		if err != nil { // the Lstat, though the file read
			return false, fmt.Errorf("write %s: %w", k.Path, err)
		}
		cur = f.Content
	}
	if links(st) > 1 && k.Class == state.ClassMemory && e.HasFreed() {
		// the other name may be a batch's link in the freed directory,
		// left by a sync killed between that link and its swap: any
		// process may free those at any time (atomicfile.Batch.Keep), and
		// counted as the user's own link it stopped every write of the
		// file for good, the killed sync's journal included (attack37b
		// M1). Looked at again once they are gone.
		e.SweepFreed()
		if now, err := os.Lstat(name); err == nil && unchangedSince(st, now) {
			st = now
		}
	}
	if n := links(st); k.Class == state.ClassMemory && n > 1 {
		// an append in place would write into the other names too (a
		// backup made with cp -al, or a link to any other file), a
		// replace would split them: neither is asked for
		return false, &PathError{Path: k.Path, IO: true, Reason: fmt.Sprintf(
			"has %d hard links; strata replaces files by renaming, which would split them; nothing written", n)}
	}
	if k.Class == state.ClassMemory && st != nil && len(data) > len(cur) && bytes.HasPrefix(data, cur) {
		written, err := e.appendInPlace(k, name, st, cur, data[len(cur):])
		if !errors.Is(err, atomicfile.ErrNoAppend) {
			return written, err
		}
	}
	if st == nil {
		if err := e.mkdirs(k, filepath.Dir(name)); err != nil {
			return false, err
		}
	}
	mode := atomicfile.Default // a new file: 0666 less the umask, as git checkout makes it
	if st != nil {
		mode = st.Mode().Perm()
	}
	var b atomicfile.Batch
	b.DirOK = func(_, real string) error { return e.insideReal(k, real) }
	b.Settle = displacedSettle
	edited := false
	b.Unchanged = func(_ string, now os.FileInfo) bool {
		edited = !unchangedSince(st, now)
		return !edited
	}
	defer b.Abort()
	add := b.Add
	if st == nil {
		add = b.AddNew // created only if nothing appears there meanwhile
	}
	if err := add(name, data, mode); err != nil {
		var refused *PathError
		if errors.As(err, &refused) {
			return false, refused
		}
		return false, fmt.Errorf("write %s: %w", k.Path, err)
	}
	unlock, err := e.lockWrites()
	if err != nil {
		return false, fmt.Errorf("write %s: %w", k.Path, err)
	}
	if WriteStep != nil {
		WriteStep("added " + k.Path)
	}
	late, err := b.Commit(nil)
	unlock()
	switch {
	case err != nil:
		return false, fmt.Errorf("write %s: %w", k.Path, err)
	case len(late) > 0 && (st == nil || edited):
		return false, nil // appeared, or edited, meanwhile
	case len(late) > 0:
		return false, &PathError{Path: k.Path, Reason: "its directory changed while it was written; not written", IO: true}
	}
	if WriteStep != nil {
		WriteStep("written " + k.Path)
	}
	return true, nil
}

// displacedSettle is how long write keeps the file it replaced reachable
// and looks at it again (atomicfile.Batch.Settle): an in-place write by a
// writer that opened the file before the swap (a shell's `>>`, Node's
// fs.writeFile, an editor saving in place) landing within it undoes the
// replace, and the caller edits the file as that writer left it. Such
// writers write within microseconds of opening; one that keeps the file
// open for longer and writes later writes into a file no name reaches.
var displacedSettle = 20 * time.Millisecond

// appendInPlace is write's way for a new version that is the file's
// content cur followed by tail: tail is appended to the file in place
// (atomicfile.Append), holding the writes lock, only while the file is
// still the one write checked (same file, size and modification time as
// st, content cur, read through the descriptor the append is written
// on); false when it is not. Unlike a replace it loses nothing another
// writer appends to the file meanwhile, with a descriptor it opened
// before or after: the kernel puts each append at the end in turn, so a
// line appended between the check and the write comes before tail.
// atomicfile.ErrNoAppend where the system has no such append: the caller
// replaces the file.
func (e *Engine) appendInPlace(k config.Kept, name string, st os.FileInfo, cur, tail []byte) (bool, error) {
	unlock, err := e.lockWrites()
	if err != nil {
		return false, fmt.Errorf("write %s: %w", k.Path, err)
	}
	defer unlock()
	if WriteStep != nil {
		WriteStep("added " + k.Path)
	}
	ok, err := atomicfile.Append(name, tail,
		func(_, real string) error { return e.insideReal(k, real) },
		func(f *os.File, now os.FileInfo) bool {
			if !unchangedSince(st, now) {
				return false
			}
			got := make([]byte, len(cur)+1) // one more: a longer file is not cur
			n, _ := io.ReadFull(f, got)
			return n == len(cur) && bytes.Equal(got[:n], cur)
		})
	var refused *PathError
	switch {
	case errors.Is(err, atomicfile.ErrNoAppend):
		return false, err
	case errors.As(err, &refused):
		return false, refused
	case err != nil:
		return false, fmt.Errorf("write %s: %w", k.Path, err)
	}
	if ok && WriteStep != nil {
		WriteStep("written " + k.Path)
	}
	return ok, nil
}

// links is st's hard link count, 0 for no file.
func links(st os.FileInfo) uint64 {
	if st == nil {
		return 0
	}
	return atomicfile.Links(st)
}

// unchangedSince reports whether now, what is at a file's name right before
// a new version replaces it, is still the file then was when its content
// was checked: the same file (inode), size and modification time.
func unchangedSince(then, now os.FileInfo) bool {
	return then != nil && now != nil && atomicfile.SameFile(then, now) &&
		then.Size() == now.Size() && then.ModTime().Equal(now.ModTime())
}

// mkdirs makes the missing directories of dir, where kept file k goes,
// each through a handle on its parent judged where it really is
// (atomicfile.MkdirAll with insideReal): a folder swapped for a link into
// .git after inside() looked gets no directory made inside .git.
func (e *Engine) mkdirs(k config.Kept, dir string) error {
	rb := realPrefix(e.keptBase(k))
	err := atomicfile.MkdirAll(dir, 0o755, func(real string) error {
		if strings.HasPrefix(rb, real+string(filepath.Separator)) {
			return nil // above the base (the home view's folder not made yet): the base is made below it
		}
		return e.insideReal(k, real)
	})
	var refused *PathError
	if err != nil && !errors.As(err, &refused) {
		err = fmt.Errorf("write %s: %w", k.Path, err)
	}
	return err
}

// realPrefix is p with the symbolic links of its longest existing prefix
// resolved, the rest as it is.
func realPrefix(p string) string {
	q, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}

// notWritable is why a kept file of mode is never written (nor replaced):
// it is not a regular file.
func notWritable(mode os.FileMode) string {
	if mode&os.ModeSymlink != 0 {
		return "not a regular file (a symbolic link is never written through)"
	}
	return state.NotRegular(mode)
}

// removeUnchanged removes k's file, which its caller checked and found at
// st (os.Lstat's answer, taken before the content was read; nil: absent,
// nothing to remove), only while it is still that file: it is moved aside
// before it is compared (atomicfile.RemoveUnchanged), so an agent's save
// landing after the check is never what goes; false then (edited
// meanwhile).
func (e *Engine) removeUnchanged(k config.Kept, st os.FileInfo) (bool, error) {
	if st == nil {
		return true, nil
	}
	if err := e.inside(k); err != nil {
		return false, err
	}
	return atomicfile.RemoveUnchanged(e.cfg.Abs(k.Path), func(now os.FileInfo) bool { return unchangedSince(st, now) })
}

// BadNames reports, one problem each, the files that would be kept but for a
// control character in their name. The name is quoted, so the report stays
// one line; the file is never read or recorded.
func (e *Engine) BadNames() (state.Problems, error) {
	_, bad, err := e.cfg.ScanAll()
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	var ps state.Problems
	for _, rel := range bad {
		ps = append(ps, BadName(rel))
	}
	return ps, nil
}

// BadName is the problem of a file that would be kept but for a control
// character in its name (config.BadName); its line quotes the name
// (Problem.Error), its JSON holds the name itself.
func BadName(rel string) state.Problem {
	return state.Problem{Path: rel, Message: "file name contains a control character; not kept (rename it)"}
}

// BadNameOf is BadName's problem for err, a path Resolve refused for a
// control character in its name (ErrBadName): such a named file is
// invalid, as in a whole check, never skipped.
func BadNameOf(err error) (state.Problem, bool) {
	var pe *PathError
	if !errors.Is(err, ErrBadName) || !errors.As(err, &pe) {
		return state.Problem{}, false
	}
	return BadName(pe.Path), true
}

// Result is the validation of one kept file.
type Result struct {
	config.Kept
	Problems state.Problems
}

// Validate checks the current content of each path with Check, comparing
// against the last recorded version. A file that does not exist is reported
// when it was named explicitly, or when its class is append-only and it was
// recorded; otherwise it is left out.
func (e *Engine) Validate(paths []config.Kept, explicit bool) ([]Result, error) {
	// judged as the next record judges them: a push into this repository
	// not taken yet is taken or put back first (judgeBase)
	head, files, followed, added, err := e.judgeBase()
	if err != nil {
		return nil, err
	}
	gone, err := e.deletedPaths(paths, files)
	if err != nil {
		return nil, err
	}
	for p := range added {
		delete(gone, p) // the push the next record puts back adds it: new there (attack40d F3)
	}
	out := make([]Result, 0, len(paths))
	for start := 0; start < len(paths); {
		window := paths[start:min(start+validateWindow, len(paths))]
		fs := make([]File, len(window))
		prevs := make([][]byte, len(window))
		unread := make([]*state.Problem, len(window))
		absent := make([]string, len(window)) // why a file is absent, when that is no problem
		checks := e.schemaChecks(fs)
		held := 0
		for i, k := range window {
			if held >= validateBytes {
				window = window[:i]
				break
			}
			fs[i], unread[i] = e.Read(k)
			if unread[i] != nil {
				continue
			}
			held += len(fs[i].Content)
			if fs[i].Exists {
				checks.add(i)
			}
			if !fs[i].Exists && e.notTakenHere(k.Path, files[k.Path]) {
				// absent because a sync (or a push into this repository)
				// did not take the state ref's version: no deletion, as
				// record and status judge it (attack39c N6: "cannot be
				// deleted; run strata restore" of a refused resolution)
				absent[i] = "not taken here: a sync or a push into this repository did not write the version recorded there (strata status)"
				continue
			}
			if id, ok := followed[k.Path]; ok && fs[i].Exists && fs[i].ID() == id {
				continue
			}
			if _, was := followed[k.Path]; followed != nil && !fs[i].Exists && !was {
				// the push not taken yet adds it: written next, no deletion (attack40d F2)
				absent[i] = "not written here yet: a push into this repository adds it (the next strata record writes it)"
				continue
			}
			if _, had := files[k.Path]; had || gone[k.Path] && fs[i].Exists {
				if prevs[i], err = e.lastVersion(k, head, files, gone); err != nil {
					checks.wait()
					return nil, err
				}
				held += len(prevs[i])
			}
		}
		start += len(window)
		schemaProblems := checks.wait()
		for i, k := range window {
			r := Result{Kept: k}
			if unread[i] != nil {
				r.Problems = state.Problems{*unread[i]}
				out = append(out, r)
				continue
			}
			r.Problems = e.checkRest(fs[i], prevs[i], schemaProblems[i])
			if !fs[i].Exists && r.Problems == nil {
				if !explicit {
					continue
				}
				r.Problems = state.Problems{{Path: k.Path, Message: cmp.Or(absent[i], "no such file")}}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// A window of Validate is at most validateWindow files, and ends once the
// files read hold validateBytes: enough to keep every core busy, while the
// memory held stays near one command's (a kept file may be max_size, 10 MB
// by default).
const validateWindow = 64

var validateBytes = 16 << 20 // a variable so that tests can lower it

// schemaChecks runs the Validator (safe for concurrent use, unlike the
// Engine) on files of fs as they are added, on as many goroutines as the
// process may run at once, while the caller reads the next ones: decoding
// and the schema check are most of a `strata validate` of many files.
func (e *Engine) schemaChecks(fs []File) *schemaChecks {
	c := &schemaChecks{out: make([]state.Problems, len(fs)), next: make(chan int, len(fs))}
	for range min(runtime.GOMAXPROCS(0), len(fs)) {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for i := range c.next {
				f := fs[i]
				c.out[i] = e.v.ValidateAs(f.Path, f.Content, f.Schema, f.Format)
			}
		}()
	}
	return c
}

type schemaChecks struct {
	out  []state.Problems
	next chan int
	wg   sync.WaitGroup
}

// add checks fs[i], which must not change afterwards.
func (c *schemaChecks) add(i int) { c.next <- i }

// wait returns the problems of each file added, by position.
func (c *schemaChecks) wait() []state.Problems {
	close(c.next)
	c.wg.Wait()
	return c.out
}

// openRegular opens a file without ever blocking (state.OpenRegular).
func openRegular(name string) (*os.File, error) {
	f, _, err := state.OpenRegular(name, true)
	return f, err
}

// onDiskAt reports whether anything is at the repo-relative path rel in
// the work tree (a file, a link, a FIFO: whatever status would list).
// skipWorktreeAbsent is why rel, a path a rule would keep whose index
// entry has git's skip-worktree bit and which is not in the work tree, is
// not kept, and how to get it: in a sparse checkout (its pattern file
// exists) it lies outside the cone, and `git sparse-checkout add` of its
// folder brings it in; otherwise the bit was set by hand. git ≥ 2.37
// clears the bit of a file written there anyway, which is then kept.
func (e *Engine) skipWorktreeAbsent(rel string) string {
	shown := state.ShellWord(rel)
	if _, err := os.Stat(filepath.Join(e.store.GitDir(), "info", "sparse-checkout")); err == nil {
		dir := path.Dir(rel)
		if dir == "." {
			dir = rel
		}
		return "outside this sparse checkout (git's skip-worktree bit keeps it out of the work tree, and strata leaves such a file alone); to work on it: git sparse-checkout add " + state.ShellWord(dir) + ", then strata restore " + shown
	}
	return "not in the work tree, and git's skip-worktree bit on it (git update-index --skip-worktree) keeps it private; to work on it: git update-index --no-skip-worktree " + shown + ", then strata restore " + shown
}

func (e *Engine) onDiskAt(rel string) bool {
	_, err := os.Lstat(e.cfg.Abs(rel))
	return err == nil
}
