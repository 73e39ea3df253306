package gitstore

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/internal/proc"
	"github.com/strata-dev/strata/state"
)

// GCInterval is how many recorded commits pass between two background
// `git gc --auto` runs. Loose objects cost about 17 KB per change on disk
// against under 1 KB packed (docs/contract.md §4); git packs them, go-git's
// RepackObjects and Prune are never used on a user's repository.
var GCInterval = 1000

// PackInterval is how many recorded commits pass between two background
// `git repack -d -l --geometric=2` runs, between the gc runs. A change the
// watcher records alone leaves four or five loose objects (a file-system
// block each, about 17 KB), and a batch a small pack (its trees as deltas,
// the rest whole): git's own gc --auto waits for ~6 700 loose objects or
// 50 packs, so .git grew to 2.3× what git gc reaches between two runs
// (BenchmarkGitSize10k).
// The geometric repack is git's incremental one: it rolls the loose objects
// and the small packs into one pack, with deltas, and merges packs only
// while their sizes do not grow geometrically, so its cost follows what was
// recorded since, not the repository's size. A repository whose gc.auto is
// 0 (automatic gc off) is left alone.
var PackInterval = 100

// countRecords counts n recorded commits in <commondir>/strata/gc-count, one
// byte per commit appended with O_APPEND (atomic between processes), and
// starts `git gc --auto` when the count reaches GCInterval. The process that
// manages to rename the full counter away is the one that starts gc. The
// file stays open between Records; when another process renamed it away the
// next Record opens the new one. Every failure is ignored: this is
// housekeeping, not recording. Callers hold s.mu.
func (s *Store) countRecords(n int) {
	counter := filepath.Join(s.commonDir, "strata", "gc-count")
	if s.counter != nil {
		if fi, err := os.Stat(counter); err != nil || !sameFile(s.counter, fi) {
			s.counter.Close()
			s.counter = nil
		}
	}
	if s.counter == nil {
		f, err := s.Shared().OpenFile(counter, os.O_WRONLY|os.O_APPEND)
		if err != nil {
			return
		}
		s.counter = f
	}
	_, err := s.counter.Write(bytes.Repeat([]byte{'.'}, n))
	fi, serr := s.counter.Stat()
	if err != nil || serr != nil {
		return
	}
	if size := fi.Size(); size < int64(GCInterval) {
		if PackInterval > 0 && size/int64(PackInterval) > (size-int64(n))/int64(PackInterval) {
			startRepack(s.commonDir, s.Shared())
		}
		return
	}
	s.counter.Close()
	s.counter = nil
	takeGCTurn(s.commonDir, s.Shared())
}

// takeGCTurn starts `git gc --auto` once the count has reached GCInterval:
// the process that manages to rename the full counter away is the one that
// starts it. While a repack or gc strata started still runs
// (housekeepingLock), the count stays where it is and the turn is owed: the
// next record, or this process when that run exits, takes it.
func takeGCTurn(commonDir string, sh gitperm.Shared) {
	lock := lockOrOwe(commonDir, sh, gcTurn)
	if lock == nil {
		return
	}
	defer lock.Close() // on the paths that start nothing; startHeld closes it once the child holds its copy
	counter := filepath.Join(commonDir, "strata", "gc-count")
	if fi, err := os.Stat(counter); err != nil || fi.Size() < int64(GCInterval) {
		paid(commonDir, gcTurn) // another process took this turn
		return
	}
	taken := counter + ".gc"
	if os.Rename(counter, taken) != nil {
		return // another process took it
	}
	os.Remove(taken)
	paid(commonDir, gcTurn)
	// This turn takes the place of the interval's repack, and `gc --auto`
	// does nothing below its thresholds (6 700 loose objects, 50 packs):
	// the repack follows it, owed before the gc starts so that its reaper
	// cannot miss it (a gc that does run holds gc.pid, and the repack then
	// leaves the work to it).
	owe(commonDir, repackTurn)
	if !startGC(commonDir, lock, sh) {
		paid(commonDir, repackTurn)
	}
}

// lockOrOwe takes housekeepingLock for turn t, or, while a run holds it,
// owes t to that run's reaper. The run may end, and its reaper find no turn
// owed, between the first try and the owe: the lock is tried once more
// after it, so that the turn is taken here rather than lost (a repack's
// worth of loose objects left until the next interval). The turn stays
// owed then: a reaper that takes it too finds the lock held and owes it
// to this run's.
func lockOrOwe(commonDir string, sh gitperm.Shared, t turn) *os.File {
	if lock := tryLock(housekeepingLock(commonDir), sh); lock != nil {
		return lock
	}
	owe(commonDir, t)
	return tryLock(housekeepingLock(commonDir), sh)
}

// housekeepingLock is the file whose lock a background repack or gc that
// strata started holds for as long as it runs: the child inherits the
// locked descriptor, so the lock goes when the last of its processes
// exits, whoever started it. While it is held no other is started: two
// repacks at once each roll the same loose objects and small packs into a
// pack of their own, and .git keeps every copy (BenchmarkGitSize10k reached
// 2.7-4.5x what git gc reaches, with up to five geometric repacks running
// at once on a machine where starting processes was slow).
func housekeepingLock(commonDir string) string {
	return filepath.Join(commonDir, "strata", "housekeeping.lock")
}

func sameFile(f *os.File, fi os.FileInfo) bool {
	ffi, err := f.Stat()
	return err == nil && os.SameFile(ffi, fi)
}

// gcStarted and repackStarted count background gc and repack runs; tests
// read them.
var gcStarted, repackStarted atomic.Int64

// running tracks the background runs this process started.
var running sync.WaitGroup

// WaitHousekeeping waits for the background gc and repack runs this process
// started. Nothing needs it for correctness (readers retry when a repack
// moves objects under them); a test that runs `git fsck` afterwards does,
// since fsck reports a loose object that a repack deleted while it listed
// them as missing.
func WaitHousekeeping() { running.Wait() }

// startRepack runs `git repack -d -l --geometric=2 -q` on the repository,
// detached, unless a gc is running (gc.pid), a repack or gc strata started
// still runs (housekeepingLock) or the user turned automatic gc off
// (gc.auto = 0). Without a git binary on PATH it does nothing.
func startRepack(commonDir string, sh gitperm.Shared) {
	if gcRunning(commonDir) {
		return
	}
	bin, err := exec.LookPath("git")
	if err != nil {
		return
	}
	lock := lockOrOwe(commonDir, sh, repackTurn)
	if lock == nil {
		return
	}
	defer lock.Close() // on the paths that start nothing; startHeld closes it once the child holds its copy
	// asked only once the lock is ours: a turn skipped while a run holds
	// it starts no git process
	if out, err := Command(exec.Command(bin, "--git-dir="+commonDir, "config", "--get", "gc.auto"), commonDir).Output(); err == nil && strings.TrimSpace(string(out)) == "0" {
		return
	}
	paid(commonDir, repackTurn)
	startHeld(bin, commonDir, sh, lock, &repackStarted, "repack", "-d", "-l", "--geometric=2", "-q")
}

// gcRunning reports whether gc.pid says that a git gc runs, as git itself
// decides before it starts one (lock_repo_for_gc in git's builtin/gc.c): the
// file is a regular one at most 12 hours old naming a process id and a
// host, and that host is another machine or that process is alive on this
// one. A gc.pid left behind by a gc that was killed used to stop every
// repack until git's own thresholds (6 700 loose objects) started a gc.
func gcRunning(commonDir string) bool {
	data, err := state.ReadRegular(filepath.Join(commonDir, "gc.pid"), 1024, false)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, state.ErrNotRegular) && !errors.Is(err, state.ErrTooLarge)
	}
	st, err := os.Lstat(filepath.Join(commonDir, "gc.pid"))
	if err != nil || time.Since(st.ModTime()) > 12*time.Hour {
		return false
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return false
	}
	if host, err := os.Hostname(); err != nil || host != fields[1] {
		return true // another machine's gc (a repository on a shared disk): git cannot tell either
	}
	return proc.Running(pid)
}

// startGC runs `git gc --auto` on the repository, detached, without
// waiting, handing it lock (housekeepingLock, held) to hold while it runs,
// and reports whether it started. git is told not to put the gc in the
// background itself (gc.autoDetach=false): strata already runs it in the
// background, and the process it waits for must be the whole gc, so that
// the repack owed after it starts when the gc ends. Left to git, the gc
// forked away at once, that repack found gc.pid and was skipped, and what
// was recorded during a long gc stayed loose until the next interval (481
// packs and 19 155 loose objects at 100 000 changes in one run of
// BenchmarkGitSize100k: 2.31×). Without a git binary on PATH it does
// nothing.
func startGC(commonDir string, lock *os.File, sh gitperm.Shared) bool {
	bin, err := exec.LookPath("git")
	if err != nil {
		return false
	}
	return startHeld(bin, commonDir, sh, lock, &gcStarted, "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
}

// startHeld starts `git args...` (bin) on the repository, detached, handing
// it lock to hold while it runs, counts it in started and leaves it to
// reap; it reports whether it started. Once the child holds its copy of the
// lock, this process's copy is closed before reap can run: a child that
// exits at once must leave the lock free for the turn reap takes, which
// would otherwise find it still held by the caller and be lost.
func startHeld(bin, commonDir string, sh gitperm.Shared, lock *os.File, started *atomic.Int64, args ...string) bool {
	// through the git door: a gc that finds work repacks with the index
	// read, which ran the repository's core.fsmonitor program (attack37d
	// L1); -c reaches gc's children through GIT_CONFIG_PARAMETERS
	cmd := Command(exec.Command(bin, append([]string{"--git-dir=" + commonDir}, args...)...), commonDir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	inherit(cmd, lock)
	detach(cmd)
	err := cmd.Start()
	lock.Close()
	if err != nil {
		return false
	}
	started.Add(1)
	running.Add(1)
	go reap(cmd, commonDir, sh)
	return true
}

// A turn is background housekeeping that came due while another run held
// housekeepingLock; a gc's turn outranks a repack's.
type turn int

const (
	repackTurn turn = iota + 1
	gcTurn
)

// owed holds, for each repository (by common dir), the turn that came due
// while a run held the lock.
var owed struct {
	sync.Mutex
	m map[string]turn
}

func owe(commonDir string, t turn) {
	owed.Lock()
	defer owed.Unlock()
	if owed.m == nil {
		owed.m = map[string]turn{}
	}
	owed.m[commonDir] = max(owed.m[commonDir], t)
}

// paid drops the owed turn t, or a lesser one, of commonDir: it is being
// taken.
func paid(commonDir string, t turn) {
	owed.Lock()
	defer owed.Unlock()
	if owed.m[commonDir] <= t {
		delete(owed.m, commonDir)
	}
}

// reap waits for a run this process started, then takes the turn that came
// due meanwhile, if any: a long-lived process (the watcher) that records
// faster than git repacks does not leave its last changes loose until the
// next record. (A one-shot process that exits first leaves the turn to the
// next record past an interval.)
func reap(cmd *exec.Cmd, commonDir string, sh gitperm.Shared) {
	defer running.Done()
	cmd.Wait()
	owed.Lock()
	t := owed.m[commonDir]
	delete(owed.m, commonDir)
	owed.Unlock()
	switch t {
	case repackTurn:
		startRepack(commonDir, sh)
	case gcTurn:
		takeGCTurn(commonDir, sh)
	}
}
