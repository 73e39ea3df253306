package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/internal/proc"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

// Fsync makes every object and ref strata writes reach the disk before the
// ref that names it moves (fsync of each object file, of the ref's lock file
// and of the ref's directory). It is off by default, matching git's own
// defaults (core.fsync leaves loose objects and refs to the OS): on a slow
// disk it multiplies the cost of a Record.
var Fsync = false

// LockTimeout is how long a ref update waits for another writer's
// <ref>.lock before giving up with state.ErrLocked.
var LockTimeout = 5 * time.Second

// StaleLockAge is the age past which a <ref>.lock of a strata ref is taken
// to be abandoned by a writer that died between creating it and renaming it
// (a watcher killed with SIGKILL), and removed. git and strata hold a ref
// lock for milliseconds; git itself would ask a human to delete the file,
// which a restarted watcher cannot do.
var StaleLockAge = 10 * time.Second

// refFile returns the loose file of ref. Per-worktree refs (HEAD and the
// like) live in the work tree's git dir; every refs/ name strata uses lives
// in the common dir, where all work trees and git itself see it.
func (s *Store) refFile(ref string) string {
	if !strings.HasPrefix(ref, "refs/") || strings.HasPrefix(ref, "refs/worktree/") ||
		strings.HasPrefix(ref, "refs/bisect/") || strings.HasPrefix(ref, "refs/rewritten/") {
		return filepath.Join(s.gitDir, filepath.FromSlash(ref))
	}
	return filepath.Join(s.commonDir, filepath.FromSlash(ref))
}

// errRefBusy marks a loose ref that does not hold a hash while its
// <ref>.lock is there: another writer is at work on the ref.
var errRefBusy = errors.New("ref is being written")

// BrokenRefError is a loose ref file that holds no object ID (garbage, or
// nothing), read again and again for a while: not a write in progress (git
// renames a complete <ref>.lock over the file, never writes it in place),
// a broken ref, which git ignores (git rev-parse REF: "warning: ignoring
// broken ref REF"; through HEAD, git log: "fatal: your current branch
// appears to be broken") and git update-ref refuses to move ("reference
// broken"), git 2.39. It wraps no sentinel:
// the ref is there, neither missing (a record must not start a history
// over it) nor locked.
type BrokenRefError struct {
	Ref     string // the ref whose file it is (HEAD's branch for HEAD)
	File    string // the file, as shown: relative to the work tree when in it
	Content string // what the file holds, but a final newline, at most 64 bytes of it ("": nothing)
	Last    string // the newest commit its reflog names; "" when none
	// Linked: the file is a symbolic link, or lies in a folder that leads
	// out of the git directory: what it holds is not shown (Content ""),
	// it may be any file of the machine (attack32 H3: refs/heads/main ->
	// ~/.ssh/id_ed25519 printed the key's first line).
	Linked bool
}

func (e *BrokenRefError) Error() string {
	held := "is empty, not an object ID"
	switch {
	case e.Linked:
		held = "is a symbolic link, or in a folder that leads out of the git directory, and reads as no object ID"
	case e.Content != "":
		held = "holds " + strconv.Quote(e.Content) + ", not an object ID"
	}
	return fmt.Sprintf("%s %s: a broken ref (git rev-parse %s warns \"ignoring broken ref %s\", and git update-ref cannot move it); %s",
		e.File, held, e.Ref, e.Ref, e.Fix())
}

// Fix is what to do about the broken ref, as Error ends: write into its
// file the commit it should name (the newest its reflog names, when it has
// one), or remove the file.
func (e *BrokenRefError) Fix() string {
	if e.Last != "" {
		return "write into it the commit it should name (its reflog's newest entry names " + e.Last + ")"
	}
	return "write into it the commit it should name, or remove it if the ref should not exist"
}

// badRef is readRefOnce's error for a loose ref file that does not hold
// an object ID (yet: readRef reads it again).
type badRef struct {
	ref, file string
	content   []byte
}

func (e *badRef) Error() string { return "read ref " + e.ref + ": " + errRefBusy.Error() }

// readRef reads ref the way git does: the loose file first, then
// packed-refs, following symbolic refs. It returns an error wrapping
// state.ErrNotFound when neither has the ref.
func (s *Store) readRef(ref string) (plumbing.Hash, error) {
	return s.readRefHolding(ref, "")
}

// readRefHolding is readRef by a writer holding the lock file held ("":
// none). A loose file without an object ID is read again for a while (a
// writer ignoring git's lock protocol may be midway); one that still has
// none is a ref being written (errRefBusy) while another writer's
// <ref>.lock is there, else a *BrokenRefError.
func (s *Store) readRefHolding(ref, held string) (plumbing.Hash, error) {
	var err error
	for try := 0; try < 20; try++ {
		var h plumbing.Hash
		h, err = s.readRefOnce(ref, 0)
		if _, busy := err.(*badRef); !busy {
			return h, err
		}
		time.Sleep(time.Duration(try+1) * time.Millisecond)
	}
	bad := err.(*badRef)
	if lock := bad.file + ".lock"; lock != held {
		if _, err := os.Lstat(lock); err == nil {
			return plumbing.ZeroHash, fmt.Errorf("read ref %s: %w", bad.ref, errRefBusy)
		}
	}
	return plumbing.ZeroHash, s.brokenRef(bad)
}

// plainRefFile reports whether file is a regular file (not a symbolic
// link) whose folder really is in the git directory or the common one:
// only then may a broken ref's message show what it holds.
func (s *Store) plainRefFile(file string) bool {
	if st, err := os.Lstat(file); err != nil || !st.Mode().IsRegular() {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return false
	}
	for _, d := range []string{s.commonDir, s.gitDir} {
		if real, err := filepath.EvalSymlinks(d); err == nil && (dir == real || strings.HasPrefix(dir, real+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// brokenRef names the loose ref file bad describes as broken.
func (s *Store) brokenRef(bad *badRef) *BrokenRefError {
	e := &BrokenRefError{Ref: bad.ref, File: bad.file}
	if rel, err := filepath.Rel(s.root, bad.file); s.root != "" && err == nil && filepath.IsLocal(rel) {
		e.File = rel
	}
	if !s.plainRefFile(bad.file) {
		e.Linked = true
	} else {
		content := string(bad.content)
		if c := strings.TrimSuffix(content, "\n"); c != "" {
			content = c
		}
		if len(content) > 64 {
			content = content[:64] + "..."
		}
		e.Content = content
	}
	// the reflog's newest move, read as it is: its object is not looked up
	// (a caller of readRef may hold s.mu, which that takes)
	if data, err := state.ReadRegular(s.logFile(bad.ref), 0, true); err == nil {
		lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
		for i := len(lines) - 1; i >= 0 && e.Last == ""; i-- {
			if _, nw, ok := reflogMove(lines[i]); ok && !nw.IsZero() {
				e.Last = nw.String()
			}
		}
	}
	return e
}

func (s *Store) readRefOnce(ref string, depth int) (plumbing.Hash, error) {
	if depth > 5 {
		return plumbing.ZeroHash, fmt.Errorf("read ref %s: symbolic ref loop", ref)
	}
	if !refName(ref) {
		return plumbing.ZeroHash, fmt.Errorf("read ref %q: not a ref's name: %w", ref, state.ErrNotFound)
	}
	b, err := state.ReadRegular(s.refFile(ref), 0, true)
	switch {
	case err == nil:
		h, target, sym, ok := parseLooseRef(b)
		switch {
		case !ok, sym && !refName(target):
			// a symbolic ref is followed only to a ref's name: "ref:
			// ../../../home/u/.ssh/id_rsa" would have read that file, and
			// a broken ref's message shows what the file holds (git calls
			// such a ref dangling, and reads nothing)
			return plumbing.ZeroHash, &badRef{ref: ref, file: s.refFile(ref), content: b}
		case sym && depth == 0 && strings.HasPrefix(ref, "refs/strata/"):
			// strata's refs name its commits; followed, a symbolic one
			// made a branch's history the state history (attack37 L3)
			return plumbing.ZeroHash, &SymbolicRefError{Ref: ref, Target: target}
		case sym:
			return s.readRefOnce(target, depth+1)
		}
		return h, nil
	case errors.Is(err, os.ErrNotExist):
	case errors.Is(err, syscall.EISDIR), errors.Is(err, state.ErrNotRegular) && isDir(s.refFile(ref)):
		// a directory where the loose file would be (refs/strata/state/
		// holding refs, or left empty): as git reads it, the ref may
		// still be packed
	case errors.Is(err, syscall.ENOTDIR):
		// a file stands where a directory of the name would be: there is
		// no such ref.
		return plumbing.ZeroHash, fmt.Errorf("read ref %s: %w", ref, state.ErrNotFound)
	default:
		return plumbing.ZeroHash, fmt.Errorf("read ref %s: %w", ref, err)
	}
	h, ok, err := s.packedRef(ref)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read ref %s: %w", ref, err)
	}
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("read ref %s: %w", ref, state.ErrNotFound)
	}
	return h, nil
}

// refName reports whether t is a ref's name git reads a file of the git
// directory for: under refs/, or a name of capitals and underscores at the
// top (HEAD, FETCH_HEAD, ORIG_HEAD; refname_is_safe), in a form git's
// check_refname_format takes (refnameFormat). Any other name, a symbolic
// ref's target or a revision typed (or sent by an agent through the MCP
// server: "refs/../../../.ssh/id_rsa", "refs/./heads/main"), names no ref:
// its file is never read, since a broken ref's message shows what the file
// holds, and git reads none for it either (refs_resolve_ref_unsafe returns
// no ref for a name check_refname_format refuses). git would read a
// lowercase name at the top ("git rev-parse foo" reads .git/foo); strata
// does not, as refname_is_safe does not.
func refName(t string) bool {
	return (allCaps(t) || strings.HasPrefix(t, "refs/")) && refnameFormat(t)
}

// refnameFormat reports whether git 2.39's check_refname_format, with the
// REFNAME_ALLOW_ONELEVEL its ref reading passes, takes t: no component
// empty ("//", a leading or trailing "/"), starting with "." ("./", "/.x")
// or ending in ".lock"; no "..", no "@{", none of the ASCII control
// characters, DEL, the space or ~^:?*[\; not "@" alone; not ending in ".".
// Bytes above ASCII are taken.
func refnameFormat(t string) bool {
	if t == "@" || strings.HasSuffix(t, ".") || strings.Contains(t, "..") || strings.Contains(t, "@{") {
		return false
	}
	for _, c := range strings.Split(t, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return true
}

// allCaps reports whether t is a name of capitals and underscores only, as
// git's pseudo-refs at the top of the git directory are.
func allCaps(t string) bool {
	for i := 0; i < len(t); i++ {
		if c := t[i]; (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return t != ""
}

// parseLooseRef reads what a loose ref file (or a HEAD) holds as git
// 2.39's files backend does (files_read_raw_ref, then
// parse_loose_ref_contents): as a C string, up to a NUL byte, with git's
// white space (isGitSpace) trimmed from its end. "ref:" starts a symbolic
// ref: target is the rest, past any white space (sym is true). Else it must
// start with an object ID, 40 hexadecimal digits in either case, followed
// by its end or by white space, and whatever comes after that is ignored:
// "ID junk", "ID\tjunk", "ID  ", "ID\r\n", an ID without a newline, and
// FETCH_HEAD's "ID\t\tbranch 'main' of URL" lines are the ID. ok is false
// for anything else, which git calls a broken ref: white space before the
// ID, a digit short, or another character right after it ("IDjunk", "ID\v").
func parseLooseRef(b []byte) (h plumbing.Hash, target string, sym, ok bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	for len(b) > 0 && isGitSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if rest, found := bytes.CutPrefix(b, []byte("ref:")); found {
		for len(rest) > 0 && isGitSpace(rest[0]) {
			rest = rest[1:]
		}
		return plumbing.ZeroHash, string(rest), true, true
	}
	const hexSize = 40
	if len(b) < hexSize || len(b) > hexSize && !isGitSpace(b[hexSize]) || !plumbing.IsHash(string(b[:hexSize])) {
		return plumbing.ZeroHash, "", false, false
	}
	return plumbing.NewHash(string(b[:hexSize])), "", false, true
}

// isGitSpace is git's isspace (sane_ctype's GIT_SPACE): the space, \t, \n
// and \r, not \v nor \f.
func isGitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// eachPacked calls fn with the hash and name of each ref of the common
// dir's packed-refs file, skipping the header and the "^" peel lines that
// follow annotated tags, until fn returns true; no file is no ref.
func (s *Store) eachPacked(fn func(hash, name []byte) (stop bool)) error {
	f, size, err := state.OpenRegular(filepath.Join(s.commonDir, "packed-refs"), true)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	// a buffer the size of the file, up to 64 KB: every ref read comes
	// here, and a fresh 64 KB for a file of a few lines cost each command
	// page faults (the scanner grows it for a longer line, up to 1 MB)
	sc.Buffer(make([]byte, min(max(size+1, 512), 64*1024)), 1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if hash, name, ok := bytes.Cut(line, []byte{' '}); ok && fn(hash, name) {
			return nil
		}
	}
	return sc.Err()
}

// packedRef looks ref up in the common dir's packed-refs file.
func (s *Store) packedRef(ref string) (h plumbing.Hash, found bool, err error) {
	want := []byte(ref)
	err = s.eachPacked(func(hash, name []byte) bool {
		if bytes.Equal(name, want) && plumbing.IsHash(string(hash)) {
			h, found = plumbing.NewHash(string(hash)), true
		}
		return found
	})
	return h, found, err
}

// SymbolicRefError is a ref of strata's (refs/strata/...) that is a
// symbolic ref ("ref: refs/heads/main", git symbolic-ref): strata's refs
// name its own commits, and it neither follows one (building on a
// branch's history) nor replaces it.
type SymbolicRefError struct {
	Ref    string
	Target string // what it points at
}

func (e *SymbolicRefError) Error() string {
	return fmt.Sprintf("%s is a symbolic ref to %s, and strata's refs name its own commits only: nothing was read or written; %s", e.Ref, e.Target, e.Fix())
}

// Fix is what to do about the symbolic ref, as Error ends.
func (e *SymbolicRefError) Fix() string {
	return fmt.Sprintf("remove it (git symbolic-ref --delete %s) to start a new history, or point it at a strata commit (git update-ref --no-deref %s COMMIT)", e.Ref, e.Ref)
}

// RefConflictError is a ref that cannot be created because another one
// is in its way, as git refuses it (refs_verify_refname_available): a ref
// below its name (refs/strata/state/x, loose or packed, where
// refs/strata/state would be created) or a ref at a folder of its name
// (refs/strata).
//
// Existing comes from packed-refs or a file name as they are: the message
// shows it through state.TermSafe (an escape sequence there never reaches
// the terminal) and its fix through state.ShellWord (attack37d L7).
type RefConflictError struct {
	Ref      string // the ref to create
	Existing string // the ref in its way
}

func (e *RefConflictError) Error() string {
	ref, existing := state.TermSafe(e.Ref), state.TermSafe(e.Existing)
	return fmt.Sprintf("cannot create %s: %s exists (git refuses it too: \"'%s' exists; cannot create '%s'\"); nothing was written; move %s away (git update-ref -d %s, after noting what it names) and run strata again",
		ref, existing, existing, ref, existing, state.ShellWord(e.Existing))
}

// prefixConflict returns the ref at a folder of ref's name, loose or
// packed ("" when none): git creates no refs/strata/state while
// refs/strata is a ref.
func (s *Store) prefixConflict(ref string) (string, error) {
	parts := strings.Split(ref, "/")
	for i := 2; i < len(parts); i++ { // refs/x, refs/x/y, ...: never refs itself
		p := strings.Join(parts[:i], "/")
		if st, err := os.Lstat(s.refFile(p)); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return s.packedConflict(ref)
}

// packedConflict returns a packed ref at a folder of ref's name, or one
// below it ("" when none).
func (s *Store) packedConflict(ref string) (conflict string, err error) {
	err = s.eachPacked(func(_, name []byte) bool {
		if n := string(name); strings.HasPrefix(n, ref+"/") || strings.HasPrefix(ref, n+"/") {
			conflict = n
		}
		return conflict != ""
	})
	return conflict, err
}

// makeRoom readies the place of ref's loose file for a ref created (or
// moved from packed-refs to a loose file) as git does: a ref in its way
// (prefixConflict, a packed or loose one below it) is a
// *RefConflictError; a folder of empty folders at the file's place is
// removed (git's remove_empty_directories): an empty
// .git/refs/strata/state/ failed every record with the rename's "file
// exists" (attack37 L2). A regular file there (the ref itself) needs
// nothing.
func (s *Store) makeRoom(ref string) error {
	file := s.refFile(ref)
	st, err := os.Lstat(file)
	if err == nil && !st.IsDir() {
		return nil
	}
	existing, err := s.prefixConflict(ref)
	if err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	if existing != "" {
		return &RefConflictError{Ref: ref, Existing: existing}
	}
	if !isDir(file) {
		return nil
	}
	var dirs []string
	err = filepath.WalkDir(file, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(file, path)
			existing = ref + "/" + filepath.ToSlash(rel)
			return filepath.SkipAll
		}
		dirs = append(dirs, path)
		return nil
	})
	switch {
	case existing != "":
		return &RefConflictError{Ref: ref, Existing: existing}
	case err != nil:
		return fmt.Errorf("update %s: %w", ref, err)
	}
	if makeRoomWalked != nil {
		makeRoomWalked()
	}
	// Folders only, deepest first: os.Remove would unlink a file found at
	// a folder's place by now, a ref git update-ref wrote there meanwhile
	// (attack37d L5). A folder no longer empty, or no longer a folder, is
	// what is in the way.
	for i := len(dirs) - 1; i >= 0; i-- {
		err := rmdir(dirs[i])
		if err == nil || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if existing := firstFileAt(dirs[i]); existing != "" {
			if rel, _ := filepath.Rel(file, existing); rel != "." {
				existing = ref + "/" + filepath.ToSlash(rel)
			} else {
				existing = ref
			}
			return &RefConflictError{Ref: ref, Existing: existing}
		}
		return fmt.Errorf("update %s: remove the empty folders at %s: %w", ref, file, err)
	}
	return nil
}

// makeRoomWalked, set by tests only, runs after makeRoom has found the
// empty folders and before it removes them: where git writes a ref at
// one of them.
var makeRoomWalked func()

// firstFileAt returns p when it is no folder, else the first file below
// it, "" when there is none.
func firstFileAt(p string) string {
	found := ""
	filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = q
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// refLock is a held <ref>.lock file.
type refLock struct {
	path string
	f    *os.File
}

// lockRef takes git's lock on ref: <ref>.lock created with O_EXCL, exactly as
// git update-ref, git pack-refs and git gc do. Holding it excludes every other
// writer of the ref, strata or git, so the read-compare-rename that follows
// is atomic. A held lock is retried with a short backoff for LockTimeout,
// then an error wrapping state.ErrLocked names the lock file.
func (s *Store) lockRef(ref string) (*refLock, error) {
	if err := s.writable(); err != nil {
		return nil, fmt.Errorf("update %s: %w", ref, err)
	}
	path := s.refFile(ref) + ".lock"
	deadline := time.Now().Add(LockTimeout)
	wait := 100 * time.Microsecond
	retries := 0
	for {
		f, err := odb.CreateExcl(path, gitperm.File, s.Shared())
		if err == nil {
			// an flock(2) held from here to the rename (commit) or the
			// removal (release): while it is held no other strata takes
			// the lock over, whatever its pid namespace, the age of the
			// lock, or what its line says (the hash replaces the line
			// before the rename); the kernel drops it when this process
			// dies, zombie or not
			flocked := false
			for try := 0; try < 5 && !flocked; try++ {
				if try > 0 {
					time.Sleep(time.Millisecond) // another process looking (flockHeld) lets go at once
				}
				flocked = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
			}
			// who holds it, until the hash replaces this line at commit: a
			// holder that is alive (paused, say) is never taken for gone
			if _, err := f.WriteString(holderLine(proc.Self(), flocked)); err != nil {
				f.Close()
				os.Remove(path)
				return nil, fmt.Errorf("lock ref: %w", err)
			}
			return &refLock{path: path, f: f}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			// refs/strata a ref of its own: no folder for the lock
			if existing, cerr := s.prefixConflict(ref); cerr == nil && existing != "" {
				return nil, &RefConflictError{Ref: ref, Existing: existing}
			}
			return nil, fmt.Errorf("lock ref: %w", err)
		}
		if strataRef(ref) && retries < 3 && s.removeStale(path) {
			retries++ // at once, a few times: then as for any held lock
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w", path, state.ErrLocked)
		}
		time.Sleep(wait)
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}

// staleChecked, set by tests only, runs after removeStale has seen an old
// lock and before it takes the remover's flock: where another process
// removes that lock and takes a fresh one.
var staleChecked func()

// strataRef reports whether ref is one of strata's own, whose abandoned
// locks it takes over (removeStale): under refs/strata/, or a tracking ref
// under TrackingPrefix (moved by strata's git fetch, and by strata).
func strataRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/strata/") || strings.HasPrefix(ref, TrackingPrefix)
}

// removeStale removes the <ref>.lock at path when it is abandoned and
// reports whether the caller should try to create it again. A lock is
// abandoned when it names a holder that is provably gone (proc.Gone: a
// writer of this pid namespace and boot killed while it held the lock),
// at once, or else when it is older than StaleLockAge (see StaleLockAge)
// and no live strata process holds it. It is judged again, and the file
// removed, under an flock every remover takes
// (<commondir>/strata/stale-ref-locks.lock): two processes that both saw
// the same abandoned lock would otherwise remove it one after the other,
// the second removing the fresh lock the first had just created, and both
// would move the ref. A creator never needs that flock: a fresh lock is
// never removed, nor one whose holder lives.
func (s *Store) removeStale(path string) bool {
	st, err := os.Lstat(path) // a symbolic link there is judged itself, dangling or not
	if err != nil {
		return errors.Is(err, os.ErrNotExist) // gone meanwhile: try again
	}
	if holder, _ := lockHolder(path); lockAge(st) <= StaleLockAge && !proc.Gone(holder) {
		return false
	}
	if staleChecked != nil {
		staleChecked()
	}
	release, err := pidlock.Hold(filepath.Join(s.commonDir, "strata", "stale-ref-locks.lock"), s.Shared(), true, LockTimeout)
	if err != nil {
		return false // the caller waits for the lock as for a live one
	}
	defer release()
	st, err = os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true
	case err != nil:
		return false
	}
	if flockHeld(path) {
		// its writer lives, paused maybe, in this pid namespace or
		// another, its line replaced by the hash it is about to rename
		// over the ref: taken over, the rename it then made moved the
		// next writer's lock over the ref (attack38c 1), the version it
		// reported recorded in no history, or a holder line in the ref
		return false
	}
	holder, flocked := lockHolder(path)
	if proc.Gone(holder) {
		// read under the flock: no other remover can have put a fresh
		// lock there since, and its dead holder renames nothing
		return os.Remove(path) == nil
	}
	if lockAge(st) <= StaleLockAge {
		return false // another process took it: a live lock
	}
	if flocked {
		// its writer held the flock from the lock's first moment, and
		// holds it no more: it is gone, whatever a process of that pid
		// here runs (another namespace's holder, attack38c 3), and a
		// zombie's counts as gone (attack38c 4)
		return os.Remove(path) == nil
	}
	if pid := holder.Pid; pid > 0 && pid != os.Getpid() && proc.Running(pid) && proc.MayRunStrata(pid) {
		// its holder lives (stopped, suspended): no one's to remove. This
		// process's own pid is an earlier life's (a container's pid 1
		// restarted): no lock of this process lives 10 s; so is a pid that
		// runs something else than strata now (reused).
		return false
	}
	return os.Remove(path) == nil
}

// lockAge is how long ago a lock file was last written, either way: a lock
// dated in the future (the clock stepped back since) is as old as it is
// far, not forever young.
func lockAge(st os.FileInfo) time.Duration {
	d := time.Since(st.ModTime())
	if d < 0 {
		d = -d
	}
	return d
}

// lockOwner starts the line a strata writer puts in a <ref>.lock it holds,
// before its holder's identity; the commit replaces it with the new hash,
// as git writes it.
const lockOwner = "strata-lock-holder "

// holderLine is the line naming holder in a lock: lockOwner, the pid,
// and, when known, its pid namespace's inode, the boot id and its start
// time, separated by spaces ("strata-lock-holder 4242 4026531836
// 5b1c…-… 123456"), then "flock" when the holder holds the lock file's
// flock (lockRef). An older strata reads the pid alone, or, in the longer
// line, no holder: such a lock it judges by age alone.
func holderLine(holder proc.Identity, flocked bool) string {
	line := lockOwner + strconv.Itoa(holder.Pid)
	if holder.Known() {
		line += " " + holder.PidNS + " " + holder.Boot + " " + strconv.FormatUint(holder.Start, 10)
		if flocked {
			line += " flock"
		}
	}
	return line + "\n"
}

// flockHeld reports whether a process holds the flock(2) of the lock file
// at path, as a strata writer holds its <ref>.lock's from its creation to
// its rename (lockRef): a shared lock is tried, without waiting, on a
// descriptor of its own (a regular file only, never followed, never waited
// on), and let go at once.
func flockHeld(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// lockHolder returns the holder a strata writer wrote into the lock file
// at path: its pid alone (an older strata's line), or its whole identity,
// and whether it took the file's flock (holderLine); zero when none is
// named (a lock of git's, empty until its rename; unreadable). A line read
// while being written, cut short, names its pid at most.
func lockHolder(path string) (holder proc.Identity, flocked bool) {
	// a regular file only, never followed, never waited on (a FIFO planted
	// there would block a read forever)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return proc.Identity{}, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return proc.Identity{}, false
	}
	buf := make([]byte, 129)
	n, _ := io.ReadFull(f, buf)
	if n > 128 {
		return proc.Identity{}, false
	}
	line, whole := strings.CutSuffix(string(buf[:n]), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), lockOwner)
	if !ok {
		return proc.Identity{}, false
	}
	fields := strings.Split(rest, " ")
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return proc.Identity{}, false
	}
	holder = proc.Identity{Pid: pid}
	if (len(fields) == 4 || len(fields) == 5 && fields[4] == "flock") && whole { // a line cut short names no more than its pid
		if start, err := strconv.ParseUint(fields[3], 10, 64); err == nil {
			holder.PidNS, holder.Boot, holder.Start = fields[1], fields[2], start
			flocked = len(fields) == 5
		}
		if !holder.Known() { // an empty field, a zero start: no whole identity, no mark (FuzzLockHolder)
			holder, flocked = proc.Identity{Pid: pid}, false
		}
	}
	return holder, flocked
}

// errLockLost is a commit whose <ref>.lock is no longer the file this
// writer created (removed as abandoned while the writer was paused): the
// ref did not move, and the update starts again.
var errLockLost = errors.New("ref lock taken over while held")

// beforeRefRename, set by tests only, runs right before a ref lock's
// ownership is checked, the move logged and the lock renamed over the ref.
var beforeRefRename func()

// BeforeRefLock, set by tests only (of other packages too), runs in a ref
// move after the new commit is built, right before the ref's lock is
// taken: another writer (a push into this repository) moving the ref there.
var BeforeRefLock func(ref string)

// lockChecked, set by tests only, runs in a commit after the lock was
// found still this writer's, right before its rename: a writer paused
// there.
var lockChecked func()

// release drops the lock without changing the ref.
func (l *refLock) release() {
	if l.mine() {
		os.Remove(l.path) // never another writer's, which took a lock thought abandoned
	}
	l.f.Close()
}

// mine reports whether the lock file at l.path is still the one l created.
func (l *refLock) mine() bool {
	held, err := l.f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(l.path)
	return err == nil && os.SameFile(held, now)
}

// commit writes h into the lock file and renames it over the ref, which
// moves the ref and releases the lock in one step.
func (l *refLock) commit(ref string, h plumbing.Hash) error {
	line := h.String() + "\n" // over the holder's line
	if _, err := l.f.WriteAt([]byte(line), 0); err != nil {
		l.release()
		return fmt.Errorf("write ref: %w", err)
	}
	if err := l.f.Truncate(int64(len(line))); err != nil {
		l.release()
		return fmt.Errorf("write ref: %w", err)
	}
	if Fsync {
		if err := l.f.Sync(); err != nil {
			l.release()
			return fmt.Errorf("write ref: %w", err)
		}
	}
	// Still ours? A holder paused past StaleLockAge (a suspended laptop,
	// Ctrl-Z) may have had its lock removed as abandoned and another
	// writer's taken in its place: renaming that one would put the other's
	// (empty) file over the ref and report a move that did not happen.
	if !l.mine() {
		l.f.Close()
		return errLockLost
	}
	if lockChecked != nil {
		lockChecked()
	}
	// the flock is kept through the rename by a second descriptor of the
	// file (it lives on the open file, not on one descriptor), so the lock
	// is never taken over between the check above and the rename
	// (close-on-exec: a git process started meanwhile does not keep it)
	keep, _, errno := syscall.Syscall(syscall.SYS_FCNTL, l.f.Fd(), syscall.F_DUPFD_CLOEXEC, 0)
	if errno == 0 {
		defer syscall.Close(int(keep))
	}
	if err := l.f.Close(); err != nil {
		os.Remove(l.path)
		return fmt.Errorf("write ref: %w", err)
	}
	if err := os.Rename(l.path, strings.TrimSuffix(l.path, ".lock")); err != nil {
		os.Remove(l.path)
		return fmt.Errorf("write ref: %w", err)
	}
	if Fsync {
		if d, err := os.Open(filepath.Dir(l.path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// readLocked reads ref while holding its lock. Nobody who follows git's
// protocol can change the loose file now, so a missing loose file means
// packed-refs is authoritative and a ref missing from both is truly new. A
// loose file without a hash (a writer ignoring the protocol) is retried,
// then named broken (the lock there is this writer's), and never mistaken
// for a missing ref.
func (s *Store) readLocked(ref string) (plumbing.Hash, bool, error) {
	h, err := s.readRefHolding(ref, s.refFile(ref)+".lock")
	if errors.Is(err, state.ErrNotFound) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	return h, true, nil
}

// updateRef moves ref from old (zero: the ref must not exist) to the commit
// build returns, by compare-and-swap under the ref's lock. build is called
// with the head to build on; when another writer moved the ref in between,
// build is called again on the new head, so no writer's commit is lost.
// build may return state.ErrUnchanged, which stops the update.
func (s *Store) updateRef(ref string, build func(parent plumbing.Hash) (plumbing.Hash, error)) (plumbing.Hash, error) {
	base, err := s.readRef(ref)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return plumbing.ZeroHash, err
	}
	// An unlocked read that finds nothing is only a guess: it is checked
	// again under the lock before anything is written.
	for attempt := 0; ; attempt++ {
		next, err := build(base)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if BeforeRefLock != nil {
			BeforeRefLock(ref)
		}
		lock, err := s.lockRef(ref)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		cur, _, err := s.readLocked(ref)
		if err == nil {
			err = s.checkMatched(ref, cur) // never from a head strata did not leave (matched.go)
		}
		if err != nil {
			lock.release()
			return plumbing.ZeroHash, err
		}
		if cur != base {
			base = cur
			if attempt < 3 {
				lock.release()
				continue
			}
			// Under heavy contention, rebuild while holding the lock so
			// this writer is sure to make progress.
			if next, err = build(base); err != nil {
				lock.release()
				return plumbing.ZeroHash, err
			}
		}
		if err := s.makeRoom(ref); err != nil {
			lock.release()
			return plumbing.ZeroHash, err
		}
		if beforeRefRename != nil {
			beforeRefRename()
		}
		err = errLockLost
		if lock.mine() { // a lost lock logs no move (it makes none)
			s.noteMatched(ref, base, next)
			s.logRef(ref, base, next)
			err = lock.commit(ref, next)
		} else {
			lock.f.Close()
		}
		if errors.Is(err, errLockLost) {
			if base, err = s.readRef(ref); err != nil && !errors.Is(err, state.ErrNotFound) {
				return plumbing.ZeroHash, err
			}
			continue // the ref did not move: built again on what it holds now
		} else if err != nil {
			return plumbing.ZeroHash, err
		}
		return next, nil
	}
}

// logFile is ref's reflog, where git keeps it (logs/ beside refs/).
func (s *Store) logFile(ref string) string {
	rel, _ := filepath.Rel(s.commonDir, s.refFile(ref))
	base := s.commonDir
	if strings.HasPrefix(rel, "..") {
		rel, _ = filepath.Rel(s.gitDir, s.refFile(ref))
		base = s.gitDir
	}
	return filepath.Join(base, "logs", rel)
}

// logRef appends ref's move from old to new to its reflog, as git does
// under core.logAllRefUpdates=always, while the ref's lock is held (so the
// entries are in the order of the moves). A `git gc --prune=now` run beside
// a record (git calls the option unsafe beside a writer) can delete a
// commit the record is about to point the ref at; the reflog then names
// the last commit that still exists (`git reflog show ref`, and `strata
// doctor`, which says how to put the ref back). Best effort: a reflog
// that cannot be written fails no record.
func (s *Store) logRef(ref string, old, new plumbing.Hash) {
	name := s.logFile(ref)
	// never through a link, and never waiting on a named pipe planted
	// there (attack39b F3: its open blocked the record for good)
	f, err := s.Shared().OpenFile(name, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK)
	if err != nil {
		return
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return
	}
	fmt.Fprintf(f, "%s %s %s %d +0000\tstrata\n", old, new, identity, time.Now().Unix())
	f.Close()
}

// LastInLog returns the newest commit of ref's reflog whose object this
// repository holds, newer first (ok false when none does, or there is no
// reflog).
func (s *Store) LastInLog(ref string) (commit string, ok bool) {
	data, err := state.ReadRegular(s.logFile(ref), 0, true)
	if err != nil {
		return "", false
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		_, nw, ok := reflogMove(lines[i])
		if ok && !nw.IsZero() && s.HasCommit(nw.String()) {
			return nw.String(), true
		}
	}
	return "", false
}

// reflogMove reads one line of a reflog, "OLD NEW IDENTITY TIME\tMESSAGE":
// the commits the ref moved from and to (zero for none).
func reflogMove(line []byte) (old, nw plumbing.Hash, ok bool) {
	o, rest, _ := bytes.Cut(line, []byte(" "))
	n, _, _ := bytes.Cut(rest, []byte(" "))
	if len(o) != 40 || len(n) != 40 || !plumbing.IsHash(string(o)) || !plumbing.IsHash(string(n)) {
		return plumbing.ZeroHash, plumbing.ZeroHash, false
	}
	return plumbing.NewHash(string(o)), plumbing.NewHash(string(n)), true
}

// HasCommit reports whether the repository holds commit id (and can read it).
func (s *Store) HasCommit(id string) bool {
	if !plumbing.IsHash(id) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.commitTree(plumbing.NewHash(id))
	return err == nil
}

// HeldLock describes a <ref>.lock older than StaleLockAge (ok false when
// the ref has no such lock).
func (s *Store) HeldLock(ref string) (l HeldLock, ok bool) {
	l.Path = s.refFile(ref) + ".lock"
	st, err := os.Lstat(l.Path)
	if err != nil || lockAge(st) <= StaleLockAge {
		return l, false
	}
	holder, _ := lockHolder(l.Path)
	l.Age, l.Pid, l.Flock = lockAge(st), holder.Pid, flockHeld(l.Path)
	l.Alive = l.Flock || l.Pid > 0 && proc.Running(l.Pid)
	return l, true
}

// HeldLock is a <ref>.lock held past StaleLockAge: its file, its age, the
// strata process its line names (0: none), whether a process holds its
// flock (a strata writer still running, in any pid namespace: it is never
// taken over, and must not be removed, as its writer renames it over the
// ref), and whether its writer lives (the flock held, or the named
// process running).
type HeldLock struct {
	Path  string
	Age   time.Duration
	Pid   int
	Flock bool
	Alive bool
}

// isDir reports whether name is a directory (not following a link).
func isDir(name string) bool {
	st, err := os.Lstat(name)
	return err == nil && st.IsDir()
}
