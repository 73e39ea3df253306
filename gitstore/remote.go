package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/internal/proc"
	"github.com/strata-dev/strata/state"
)

// The network side of sync runs the git binary (git fetch, git push) rather
// than go-git's transports: git honours the user's ssh config, credential
// helpers, insteadOf rewrites and every URL form (path, file://, ssh, https)
// exactly as their other git commands do. Objects and merge commits are still
// written by strata itself (internal/odb), and strata's own refs still move
// under git's lock protocol.

// TrackingPrefix is where strata keeps what it last saw of each remote's
// state ref: refs/strata-remotes/<escaped remote>/state. It lies outside
// refs/strata/, so a tracking ref is never also a folder of refs/strata/state
// or refs/strata/worktrees/..., and the escaped remote is one ref component,
// so no remote's ref is a folder of another's.
const TrackingPrefix = "refs/strata-remotes/"

// noHooks is the hooks directory strata's fetch and push run with: one
// that holds none. Nothing strata asks of them needs a hook, and a
// repository's reference-transaction hook ran at each sync's fetch
// (attack37d L2); the pre-push hook was already off (--no-verify).
const noHooks = "/dev/null"

// ErrRemoteMoved is returned by Push when the remote's state ref is no longer
// the commit the push expected (someone else pushed meanwhile).
var ErrRemoteMoved = errors.New("the remote's state ref moved")

// Remote is a remote as strata uses it.
type Remote struct {
	Name string // as the user named it: a configured remote, a URL or a path
	Arg  string // what git is given: the remote's name, a URL, or an absolute path
	Ref  string // the tracking ref
	// Env, when set, replaces the environment of git fetch and push (the
	// watcher adds GIT_TERMINAL_PROMPT=0, so a remote asking for a password
	// fails instead of waiting for a terminal nobody watches).
	Env []string
	// WouldKeep, when set, says whether this machine, holding no version
	// of path, would keep that (none) over version blob if a remote
	// offered it: the rules of its sync's merge check (its schema,
	// max_size, the guard of what Claude Code runs). Fetch judges with it
	// each file an older strata's kept local commit drops without a delete
	// block; unset, every such drop is refused.
	WouldKeep func(path, blob string) bool
}

// RemoteError is a failed git fetch or push: the remote is unreachable,
// refuses access, or is not a repository.
type RemoteError struct {
	Op     string // fetch or push
	Remote string
	Msg    string // git's first error line
}

// sharedRef is the ref machines share through a remote: the main work
// tree's state ref (refs/strata/state), whatever the local work tree
// records on; for a home Store (OpenHome) refs/strata/home/state, which
// only `sync --home` names.
func (s *Store) sharedRef() string { return "refs/strata/" + s.prefix + "state" }

func (e *RemoteError) Error() string { return e.Op + " " + e.Remote + ": " + e.Msg }

// fsckLeftToStrata are git fsck's checks of a tree entry's name and mode
// (warnings, which a fetch's strict check takes as errors) that strata's
// check of a fetched tree makes itself, refusing the remote's state with
// the entry's path named, not a tree object's id: a `.`, `..` or `.git`
// name in any of its aliases, a name holding a slash, an empty name, a mode
// other than a blob's or a tree's.
var fsckLeftToStrata = []string{"hasDot", "hasDotdot", "hasDotgit", "fullPathname", "emptyName", "badFilemode"}

// FsckRefusedError is a fetch git refused because an object the remote
// sent fails git fsck's checks (fetch.fsckObjects): nothing of it was kept.
// Msg is git's verdict on the first such object.
type FsckRefusedError struct {
	Remote string
	Msg    string
}

func (e *FsckRefusedError) Error() string {
	return "sync " + e.Remote + ": refused the remote's state: git fsck refuses an object it holds (" + state.TermSafe(e.Msg) +
		"), and every remote that checks what it receives would refuse it from this machine too (nothing fetched, nothing merged)"
}

// ResolveRemote names a remote for sync: a remote configured in the
// repository keeps its name; anything else is a URL or a path, a path being
// made absolute from cwd so the same remote always gets the same tracking ref.
func (s *Store) ResolveRemote(ctx context.Context, name, cwd string) (Remote, error) {
	if name == "" {
		return Remote{}, errors.New("remote: empty name")
	}
	if strings.HasPrefix(name, "-") {
		return Remote{}, fmt.Errorf("remote %q: a remote's name cannot start with '-'", name)
	}
	r := Remote{Name: name, Arg: name}
	configured := s.remoteInConfig(name)
	if !configured { // elsewhere: the user's or system's config, an included file, .git/remotes
		out, err := s.git(ctx, nil, "remote")
		if err != nil {
			return Remote{}, fmt.Errorf("remote: %w", err)
		}
		for _, n := range strings.Split(out, "\n") {
			configured = configured || strings.TrimSpace(n) == name
		}
	}
	if !configured && !strings.Contains(name, "://") && !isSCPLike(name) {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		r.Arg = filepath.Clean(p)
	}
	key := r.Arg
	if configured {
		key = name
	}
	r.Ref = TrackingPrefix + EscapeRemote(key) + "/" + s.prefix + "state"
	return r, nil
}

// remoteInConfig reports whether the repository's own config file sets a
// key of remote name in a [remote "name"] section, so that `git remote`
// lists it and git fetch takes name as that remote: the common case,
// answered without starting git. Anything else (no such section there, a
// file that cannot be read) answers false and the caller asks git.
func (s *Store) remoteInConfig(name string) bool {
	data, err := state.ReadRegular(filepath.Join(s.commonDir, "config"), 1<<20, true) // never blocks on a pipe
	if err != nil {
		return false
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			in = remoteHeader(line, name)
		case in && (line[0] >= 'a' && line[0] <= 'z' || line[0] >= 'A' && line[0] <= 'Z'):
			return true // a key of the section (git's keys start with a letter)
		}
	}
	return false
}

// remoteHeader reports whether line is exactly a section header
// [remote "name"], section name in any case, nothing after it; any other
// spelling (escapes in the quotes, the old [remote.name] form, a key on the
// same line) is left to git.
func remoteHeader(line, name string) bool {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(line, "["), "]")
	i := strings.IndexAny(inner, " \t")
	if !ok || i < 0 || !strings.EqualFold(inner[:i], "remote") || strings.ContainsAny(name, `"\`) {
		return false
	}
	return strings.TrimLeft(inner[i:], " \t") == `"`+name+`"`
}

// isSCPLike reports whether s is git's scp-like ssh syntax, host:path.
func isSCPLike(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.ContainsRune(s[:i], '/')
}

// EscapeRemote turns a remote name or URL into one valid ref component:
// letters, digits, '-' and '_' stay, '.' stays where git allows it, and
// every other byte becomes %XX. UnescapeRemote reverses it.
func EscapeRemote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if c == '.' && i > 0 && s[i-1] != '.' && i < len(s)-1 && !strings.HasSuffix(s, ".lock") {
			ok = true
		}
		if ok {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// UnescapeRemote returns the remote name or URL an escaped component stands for.
func UnescapeRemote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02X", &c); err == nil {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// brokenLocalRef is the *BrokenRefError of the local ref git's fetch
// stopped at ("fatal: bad object refs/strata/gitrules": git reads every
// ref before it fetches), nil when msg names none or the ref reads: the
// fix is the broken ref's own, not the remote's.
func (s *Store) brokenLocalRef(msg string) error {
	_, after, ok := strings.Cut(msg, "bad object ")
	if !ok {
		return nil
	}
	ref, _, _ := strings.Cut(strings.TrimSpace(after), "\n")
	if !strings.HasPrefix(ref, "refs/") {
		return nil
	}
	var broken *BrokenRefError
	if _, err := s.readRef(ref); errors.As(err, &broken) {
		return broken
	}
	return nil
}

// Fetch copies the remote's refs/strata/state (and the objects it needs)
// into r.Ref with `git fetch`, and returns the fetched head, "" when the
// remote has no state ref yet (the tracking ref is then removed). It returns
// a *RemoteError when the remote cannot be reached, and an *UnsafeTreeError
// when the fetched head's tree holds a path or mode strata refuses, or a
// commit it brings does not say in its trailers what it changes (checkNew;
// the tracking ref is then put back as it was).
func (s *Store) Fetch(ctx context.Context, r Remote) (string, error) {
	before, _ := s.readRef(r.Ref)
	// with a reflog for the tracking ref, which git keeps only for the
	// refs/remotes it knows: the heads the remote had (PastHeads)
	// fetch.fsckObjects: git checks each object it receives as git fsck
	// does and keeps none of a pack holding one it refuses (a commit
	// with no author line, a malformed tree): taken, such an object would
	// be pushed on by this machine, and every remote that checks what it
	// receives (receive.fsckObjects, as the big hosts set it) would then
	// refuse this machine's state; kept unreachable, git fsck and doctor
	// would fail on it for weeks (attack35 M1, L1). It costs a few
	// milliseconds for 1 000 files. The tree entries strata's own check
	// refuses by path, with the entry named (checkFetched, checkNew), are
	// left to it (fsckLeftToStrata).
	args := []string{"-c", "core.logAllRefUpdates=always", "-c", "fetch.fsckObjects=true", "-c", "core.hooksPath=" + noHooks}
	// A fetch killed while it renamed the tracking ref's lock (git's: empty,
	// or the hash) left it, and git fetch would fail on it for good: taken
	// over as the locks of strata's own refs are, once older than
	// StaleLockAge (a live fetch's lock is younger, and kept).
	s.removeStale(s.refFile(r.Ref) + ".lock")
	for _, id := range fsckLeftToStrata {
		args = append(args, "-c", "fetch.fsck."+id+"=ignore")
	}
	// --no-auto-maintenance: a git maintenance run in the user's
	// repository at each sync cost a process, and one killed with the
	// sync left objects/maintenance.lock, which stopped every maintenance
	// of the user's own git silently (attack37b L3); strata's own
	// housekeeping packs what it writes (gc.go).
	_, err := s.git(ctx, r.Env, append(args, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		"--no-auto-maintenance", "--", r.Arg, "+"+s.sharedRef()+":"+r.Ref)...)
	if err != nil {
		msg := gitMessage(err)
		var ge *gitError
		if errors.As(err, &ge) && strings.Contains(ge.stderr, "fatal: fsck error in") {
			return "", &FsckRefusedError{Remote: r.Name, Msg: msg}
		}
		if strings.Contains(msg, "couldn't find remote ref") {
			if err := s.deleteRef(r.Ref); err != nil {
				return "", err
			}
			return "", nil
		}
		if err := s.brokenLocalRef(msg); err != nil {
			return "", fmt.Errorf("fetch %s: git fetches nothing while a ref of this repository is broken: %w", r.Name, err)
		}
		return "", &RemoteError{Op: "fetch", Remote: r.Name, Msg: msg}
	}
	h, err := s.readRef(r.Ref)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", r.Name, err)
	}
	if err := s.checkFetched(r.Name, h); err != nil {
		return "", s.untrack(r.Ref, before, err)
	}
	s.mu.Lock()
	drops, err := s.checkNew(r.Name, h)
	s.mu.Unlock()
	if err == nil {
		err = s.judgeDrops(r, h, drops)
	}
	if err != nil {
		return "", s.untrack(r.Ref, before, err)
	}
	return h.String(), nil
}

// Push sets the remote's refs/strata/state to commit with `git push`, by
// compare-and-swap: only when the remote still has expected ("" meaning it
// has no state ref), as --force-with-lease does. On success the tracking ref
// is moved to commit. It returns ErrRemoteMoved when the remote changed
// meanwhile, a *RemoteError when it cannot be reached or refuses. The user's
// pre-push hook is not run: strata pushes only its own ref.
func (s *Store) Push(ctx context.Context, r Remote, commit, expected string) error {
	out, err := s.git(ctx, r.Env, "-c", "core.hooksPath="+noHooks, "push", "--porcelain", "--quiet", "--no-verify",
		"--force-with-lease="+s.sharedRef()+":"+expected, "--", r.Arg, commit+":"+s.sharedRef())
	if err != nil {
		msg := gitMessage(err)
		// A lease that no longer holds, or the remote's ref lock held by a
		// concurrent push ("failed to update ref"): both mean the remote is
		// moving under us, and a fresh fetch and merge is the answer.
		var ge *gitError
		stderr := msg
		if errors.As(err, &ge) {
			stderr = ge.stderr
		}
		if lock := lockFileIn(out + "\n" + stderr); lock != "" {
			return &RemoteLockedError{Remote: r.Name, Ref: s.sharedRef(), Lock: lock}
		}
		if strings.Contains(out, "stale info") || strings.Contains(out, "fetch first") ||
			strings.Contains(out, "non-fast-forward") || strings.Contains(msg, "stale info") ||
			strings.Contains(out, "failed to update ref") || strings.Contains(out, "cannot lock ref") {
			return fmt.Errorf("push %s: %w", r.Name, ErrRemoteMoved)
		}
		if line := rejectedLine(out); line != "" {
			msg = line
		}
		return &RemoteError{Op: "push", Remote: r.Name, Msg: msg}
	}
	return s.setRef(r.Ref, plumbing.NewHash(commit))
}

// RemoteLockedError is a push the remote refused because the lock file of
// its state ref exists: a push running there, or one killed while it held
// the lock (git leaves the file then, and every later push fails). It
// counts as the remote moving (one fetch and push again), and says which
// file, when it stays.
type RemoteLockedError struct {
	Remote, Ref, Lock string
}

func (e *RemoteLockedError) Error() string {
	return "push " + e.Remote + ": the remote's " + e.Ref + " is locked (" + state.TermSafe(e.Lock) +
		" exists: another push is running there, or one was killed; when none runs, remove that file on the remote)"
}

// Unwrap makes it an ErrRemoteMoved: a push that held the lock a moment
// ago has moved the ref.
func (e *RemoteLockedError) Unwrap() error { return ErrRemoteMoved }

// lockFileIn finds the lock file git's "Unable to create 'PATH.lock': File
// exists" names in its output, "" when there is none.
func lockFileIn(out string) string {
	const pre, post = "Unable to create '", ".lock': File exists"
	for _, l := range strings.Split(out, "\n") {
		i := strings.Index(l, pre)
		if i < 0 {
			continue
		}
		if j := strings.Index(l[i+len(pre):], post); j >= 0 {
			return path.Clean(l[i+len(pre) : i+len(pre)+j+len(".lock")])
		}
	}
	return ""
}

// rejectedLine finds a porcelain status line of a refused ref.
func rejectedLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "!\t") {
			f := strings.Split(l, "\t")
			return strings.TrimSpace(f[len(f)-1])
		}
	}
	return ""
}

// RemoteOf returns the remote (unescaped) that ref, a tracking ref of the
// state ref as Remote names it, follows, whether or not the ref exists yet;
// ok is false for any other ref.
func RemoteOf(ref string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(ref, TrackingPrefix)
	if !ok {
		return "", false
	}
	name, leaf, ok := strings.Cut(rest, "/")
	if !ok || leaf != "state" {
		return "", false
	}
	return UnescapeRemote(name), true
}

// TrackingRefs lists strata's tracking refs, sorted, each with the remote it
// tracks (unescaped).
func (s *Store) TrackingRefs() (map[string]string, error) {
	out := map[string]string{}
	add := func(ref string) {
		if name, ok := RemoteOf(ref); ok {
			out[ref] = name
		}
	}
	dir := filepath.Join(s.commonDir, filepath.FromSlash(TrackingPrefix))
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "state")); err == nil {
			add(TrackingPrefix + e.Name() + "/state")
		}
	}
	err = s.eachPacked(func(_, name []byte) bool {
		add(string(name))
		return false
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setRef moves ref to h under git's lock, whatever it held before.
func (s *Store) setRef(ref string, h plumbing.Hash) error {
	lock, err := s.lockRef(ref)
	if err != nil {
		return err
	}
	if err := s.makeRoom(ref); err != nil {
		lock.release()
		return err
	}
	return lock.commit(ref, h)
}

// deleteRef removes a loose tracking ref under its lock. A packed copy is
// left to git (strata's tracking refs are normally loose).
func (s *Store) deleteRef(ref string) error {
	lock, err := s.lockRef(ref)
	if err != nil {
		return err
	}
	defer lock.release()
	if err := os.Remove(s.refFile(ref)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete ref %s: %w", ref, err)
	}
	return nil
}

// gitError is a failed git command with its stderr.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	return "git " + e.args[0] + ": " + gitMessage(e)
}

// gitMessage returns the most telling line of a git failure: the first
// "fatal:" or "error:" line, without the prefix.
func gitMessage(err error) string {
	var ge *gitError
	if !errors.As(err, &ge) {
		return err.Error()
	}
	var first string
	for _, l := range strings.Split(ge.stderr, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal: ", "error: "} {
			if rest, ok := strings.CutPrefix(l, p); ok {
				if first == "" {
					first = rest
				}
			}
		}
	}
	if first == "" {
		first = strings.TrimSpace(ge.stderr)
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
	}
	if first == "" {
		first = ge.err.Error()
	}
	return first
}

// git runs the git binary in the work tree and returns its stdout. It
// returns a *gitError on failure.
func (s *Store) git(ctx context.Context, env []string, args ...string) (string, error) {
	out, err := s.gitRaw(ctx, env, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// gitRaw is git, returning what git printed byte for byte.
func (s *Store) gitRaw(ctx context.Context, env []string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("sync needs the git binary on PATH")
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = env
	if s.root != "" {
		s.gitCmd(cmd)
	} else {
		Command(cmd, s.gitDir)
	}
	boundWait(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return stdout.Bytes(), &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

// gitWaitDelay is how long a git command's output is waited for once git
// has exited or been killed: a process git started may hold its pipes.
const gitWaitDelay = 5 * time.Second

// boundWait has cmd, when its context ends, kill git and every process it
// started (a promisor fetch under git cat-file, a transport, ssh: killed
// alone, git left them holding the pipes strata reads, and the wait
// outlived the context's bound by as long as they ran: attack31 F5), and
// wait for its output at most gitWaitDelay after git is gone. A process
// git left running on purpose (a credential-cache daemon) holding a pipe
// of a git that succeeded costs the delay, not the success: Run's
// exec.ErrWaitDelay is no failure.
func boundWait(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		proc.KillTree(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = gitWaitDelay
}
