package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/proc"
	"github.com/strata-dev/strata/state"
)

// lockedRepo returns a repository with one recorded commit whose state
// ref's lock file is held (an empty <ref>.lock, fresh), and a LockTimeout
// short enough for a test, put back at its end.
func lockedRepo(t *testing.T) (*testRepo, *Store, string) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	require.NoError(t, err)
	mustRecord(t, s, change(".claude/a.json", "{}", t0))
	lock := s.refFile(s.StateRef()) + ".lock"
	timeout := LockTimeout
	t.Cleanup(func() { LockTimeout = timeout })
	LockTimeout = 200 * time.Millisecond
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	return r, s, lock
}

// TestStaleRefLock: a <ref>.lock left by a writer killed between create and
// rename blocks updates only until it is StaleLockAge old; a fresh lock is
// respected and ends in ErrLocked.
func TestStaleRefLock(t *testing.T) {
	r, s, lock := lockedRepo(t)
	_, err := s.Record(change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
	require.True(t, errors.Is(err, state.ErrLocked), "a fresh lock is respected: %v", err)

	old := time.Now().Add(-2 * StaleLockAge)
	require.NoError(t, os.Chtimes(lock, old, old))
	mustRecord(t, s, change(".claude/a.json", `{"v":2}`, t0.Add(2*time.Second)))
	_, err = os.Stat(lock)
	require.True(t, errors.Is(err, os.ErrNotExist), "the lock is gone after the rename")
	fsck(t, r.wt)
}

// TestStaleRefLockRemovedOnce: two writers saw the same abandoned lock; the
// first removed it and took a fresh one of its own. The second, judging
// the age again under the removers' flock, respects that fresh lock
// instead of removing it (before, both then moved the ref).
func TestStaleRefLockRemovedOnce(t *testing.T) {
	_, s, lock := lockedRepo(t)
	old := time.Now().Add(-2 * StaleLockAge)
	require.NoError(t, os.Chtimes(lock, old, old))
	defer func() { staleChecked = nil }()
	staleChecked = func() {
		staleChecked = nil
		// the other writer: removes the abandoned lock, takes its own
		require.NoError(t, os.Remove(lock))
		require.NoError(t, os.WriteFile(lock, []byte("theirs"), 0o644))
	}
	_, err := s.Record(change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
	require.True(t, errors.Is(err, state.ErrLocked), "the other writer's fresh lock is respected: %v", err)
	data, err := os.ReadFile(lock)
	require.NoError(t, err, "the fresh lock is still there")
	require.Equal(t, "theirs", string(data))
}

// TestRefLockTakenOverWhileHeld: a writer paused past StaleLockAge while
// holding the lock had it removed as abandoned and another writer's lock
// took its place. Resumed, it must not rename that other lock over the ref
// (an empty ref, a move reported that never happened): it sees the lock is
// not its own and starts again, here waiting for the other writer.
func TestRefLockTakenOverWhileHeld(t *testing.T) {
	r, s, lock := lockedRepo(t)
	require.NoError(t, os.Remove(lock)) // no one holds it: the record below takes it
	before, err := s.Head(s.StateRef())
	require.NoError(t, err)
	reflog, err := os.ReadFile(s.logFile(s.StateRef()))
	require.NoError(t, err)
	defer func() { beforeRefRename = nil }()
	beforeRefRename = func() {
		beforeRefRename = nil
		// meanwhile: this lock judged abandoned and removed, another taken
		require.NoError(t, os.Remove(lock))
		require.NoError(t, os.WriteFile(lock, nil, 0o644))
	}
	_, err = s.Record(change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
	require.True(t, errors.Is(err, state.ErrLocked), "waits for the other writer's lock: %v", err)
	after, err := s.Head(s.StateRef())
	require.NoError(t, err, "the ref still holds a commit")
	require.Equal(t, before, after)
	_, err = os.Stat(lock)
	require.NoError(t, err, "the other writer's lock is still there")
	now, err := os.ReadFile(s.logFile(s.StateRef()))
	require.NoError(t, err)
	require.Equal(t, string(reflog), string(now), "no move logged that was not made")
	fsck(t, r.wt)
}

// TestRefLockPausedBeforeRenameKept: a writer paused after its last check
// that the lock is its own, right before its rename, its line already
// replaced by the hash (a container frozen, a process stopped), holds the
// lock's flock: another writer, however old the lock looks, waits and
// fails with ErrLocked instead of taking it over, so the paused writer's
// rename never moves the other's lock over the ref (attack38c 1: the
// version it reported recorded was in no history, or the ref held a
// holder line).
func TestRefLockPausedBeforeRenameKept(t *testing.T) {
	r, s, lock := lockedRepo(t)
	require.NoError(t, os.Remove(lock))
	stale := StaleLockAge
	t.Cleanup(func() { StaleLockAge = stale; lockChecked = nil })
	StaleLockAge = 50 * time.Millisecond
	paused, resume := make(chan struct{}), make(chan struct{})
	lockChecked = func() {
		lockChecked = nil
		close(paused)
		<-resume
	}
	type result struct {
		entries []state.Entry
		err     error
	}
	done := make(chan result)
	go func() {
		e, err := s.Record(change(".claude/a.json", `{"v":"paused"}`, t0.Add(time.Second)))
		done <- result{e, err}
	}()
	<-paused
	old := time.Now().Add(-2 * time.Second)
	require.NoError(t, os.Chtimes(lock, old, old))
	other, err := Open(r.open) // another process's store
	require.NoError(t, err)
	_, err = other.Record(change(".claude/a.json", `{"v":"other"}`, t0.Add(2*time.Second)))
	require.True(t, errors.Is(err, state.ErrLocked), "the paused writer's lock is kept: %v", err)
	close(resume)
	res := <-done
	require.NoError(t, res.err)
	head, err := s.Head(s.StateRef())
	require.NoError(t, err)
	require.Equal(t, res.entries[0].Commit, head, "the paused writer's commit is the ref's")
	mustRecord(t, s, change(".claude/a.json", `{"v":"other"}`, t0.Add(3*time.Second)))
	fsck(t, r.wt)
}

// TestRefLockOfLiveHolderKept: a lock older than StaleLockAge whose holder
// is alive (a writer stopped with Ctrl-Z, a suspended laptop) is not taken
// for abandoned: the writer waits, then fails with ErrLocked. A holder
// that is gone leaves a lock that is removed.
func TestRefLockOfLiveHolderKept(t *testing.T) {
	_, s, lock := lockedRepo(t)
	old := time.Now().Add(-2 * StaleLockAge)
	// a process that lives, may be strata (this test binary, sleeping),
	// and is not this one
	holder := exec.Command(os.Args[0], "-test.run=^TestHelperSleeps$")
	holder.Env = append(os.Environ(), "STRATA_TEST_SLEEP=1")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	require.NoError(t, os.WriteFile(lock, []byte(lockOwner+strconv.Itoa(holder.Process.Pid)+"\n"), 0o644))
	require.NoError(t, os.Chtimes(lock, old, old))
	_, err := s.Record(change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
	require.True(t, errors.Is(err, state.ErrLocked), "a live holder's lock is kept: %v", err)

	// the same pid named by a holder of another pid namespace that took
	// the lock's flock (a container's strata killed, its number running
	// strata here, or a zombie): the flock free, the lock old, it is gone
	// (attack38c 3, 4)
	if me := proc.Self(); me.Known() {
		other := me
		other.Pid, other.PidNS = holder.Process.Pid, me.PidNS+"0"
		require.NoError(t, os.WriteFile(lock, []byte(holderLine(other, true)), 0o644))
		require.NoError(t, os.Chtimes(lock, old, old))
		mustRecord(t, s, change(".claude/a.json", `{"v":"taken over"}`, t0.Add(1500*time.Millisecond)))
		// and not while a process holds that flock, however old the lock
		require.NoError(t, os.WriteFile(lock, []byte(holderLine(other, true)), 0o644))
		f, err := os.Open(lock)
		require.NoError(t, err)
		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
		require.NoError(t, os.Chtimes(lock, old, old))
		_, err = s.Record(change(".claude/a.json", `{"v":"flock held"}`, t0.Add(1600*time.Millisecond)))
		require.True(t, errors.Is(err, state.ErrLocked), "a lock whose flock is held is kept: %v", err)
		f.Close()
	}

	require.NoError(t, os.WriteFile(lock, []byte(lockOwner+"999999999\n"), 0o644))
	require.NoError(t, os.Chtimes(lock, old, old))
	mustRecord(t, s, change(".claude/a.json", `{"v":2}`, t0.Add(2*time.Second)))
}

// TestRefLockReleaseKeepsOthers: a writer letting go of a lock that was
// taken from it (removed as abandoned, another writer's created in its
// place) removes nothing: the other writer's lock stays.
func TestRefLockReleaseKeepsOthers(t *testing.T) {
	_, s, lock := lockedRepo(t)
	require.NoError(t, os.Remove(lock))
	l, err := s.lockRef(s.StateRef())
	require.NoError(t, err)
	require.NoError(t, os.Remove(lock))
	require.NoError(t, os.WriteFile(lock, []byte("theirs"), 0o644))
	l.release()
	data, err := os.ReadFile(lock)
	require.NoError(t, err, "the other writer's lock is still there")
	require.Equal(t, "theirs", string(data))
}

// TestRefLockFIFO: a FIFO planted where the lock goes, older than
// StaleLockAge, is never read (a read would wait forever for a writer):
// it is taken for an abandoned lock and removed.
func TestRefLockFIFO(t *testing.T) {
	_, s, lock := lockedRepo(t)
	require.NoError(t, os.Remove(lock))
	require.NoError(t, syscall.Mkfifo(lock, 0o644))
	old := time.Now().Add(-2 * StaleLockAge)
	require.NoError(t, os.Chtimes(lock, old, old))
	mustRecord(t, s, change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
}

// TestRefLockOddFiles: an old lock that is a dangling symbolic link is
// removed (it made every writer spin: a stat through it found nothing), and
// one naming this very process — an earlier life's, a container's pid 1
// restarted — is abandoned too.
func TestRefLockOddFiles(t *testing.T) {
	_, s, lock := lockedRepo(t)
	old := time.Now().Add(-2 * StaleLockAge)
	require.NoError(t, os.Remove(lock))
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "gone"), lock))
	require.NoError(t, os.Chtimes(filepath.Dir(lock), old, old))
	require.NoError(t, unixLutimes(lock, old))
	mustRecord(t, s, change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))

	require.NoError(t, os.WriteFile(lock, []byte(lockOwner+strconv.Itoa(os.Getpid())+"\n"), 0o644))
	require.NoError(t, os.Chtimes(lock, old, old))
	mustRecord(t, s, change(".claude/a.json", `{"v":2}`, t0.Add(2*time.Second)))
}

// unixLutimes sets a symbolic link's own times.
func unixLutimes(path string, at time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(at.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// TestRefLockFromTheFuture: a lock dated well in the future (the clock
// stepped back since it was written) whose holder is gone is abandoned,
// not young forever.
func TestRefLockFromTheFuture(t *testing.T) {
	_, s, lock := lockedRepo(t)
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.WriteFile(lock, []byte(lockOwner+"999999999\n"), 0o644))
	require.NoError(t, os.Chtimes(lock, future, future))
	mustRecord(t, s, change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
}

// TestRefLockOfReusedPid: an old lock naming a live process that runs
// something else than strata (its pid reused since the writer died) is
// abandoned: here the test's parent when it is not a strata test binary.
func TestRefLockOfReusedPid(t *testing.T) {
	parent := os.Getppid()
	if proc.MayRunStrata(parent) {
		t.Skipf("the parent process (%q) may be strata: nothing to test here", proc.Name(parent))
	}
	_, s, lock := lockedRepo(t)
	old := time.Now().Add(-2 * StaleLockAge)
	require.NoError(t, os.WriteFile(lock, []byte(lockOwner+strconv.Itoa(parent)+"\n"), 0o644))
	require.NoError(t, os.Chtimes(lock, old, old))
	mustRecord(t, s, change(".claude/a.json", `{"v":1}`, t0.Add(time.Second)))
}

// TestHelperSleeps is a live process for the lock tests to name, run by
// them with STRATA_TEST_SLEEP=1; otherwise it does nothing.
func TestHelperSleeps(t *testing.T) {
	if os.Getenv("STRATA_TEST_SLEEP") != "1" {
		return
	}
	time.Sleep(time.Minute)
}

// deadPid is the pid of a process that ran and is gone (waited for).
func deadPid(t *testing.T) int {
	c := exec.Command("sh", "-c", "exit 0")
	require.NoError(t, c.Run())
	require.False(t, proc.Running(c.Process.Pid))
	return c.Process.Pid
}

// TestRefLockOfDeadHolder: a fresh lock naming a holder of this pid
// namespace and boot that runs no more (a writer killed with SIGKILL) is
// taken over at once, as is one whose pid runs a process started at
// another time (reused); a live holder's, one of another pid namespace or
// boot (a container's or the host's, sharing the repository), and one in
// the older format (the pid alone) wait for the age rule.
func TestRefLockOfDeadHolder(t *testing.T) {
	me := proc.Self()
	if !me.Known() {
		t.Skip("no pid namespace, boot id or start time to read here")
	}
	_, s, lock := lockedRepo(t)
	holder := exec.Command(os.Args[0], "-test.run=^TestHelperSleeps$")
	holder.Env = append(os.Environ(), "STRATA_TEST_SLEEP=1")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	live := proc.Identity{Pid: holder.Process.Pid, PidNS: me.PidNS, Boot: me.Boot}
	var ok bool
	live.Start, ok = proc.StartTime(live.Pid)
	require.True(t, ok)
	dead := me
	dead.Pid = deadPid(t)
	reused := live
	reused.Start++
	otherNS, otherBoot := dead, dead
	otherNS.PidNS += "0"
	otherBoot.Boot = "00000000-0000-0000-0000-000000000000"

	for i, c := range []struct {
		line  string
		taken bool
	}{
		{holderLine(dead, false), true},
		{holderLine(reused, false), true},
		{holderLine(live, false), false},
		{holderLine(otherNS, false), false},
		{holderLine(otherBoot, false), false},
		{lockOwner + strconv.Itoa(dead.Pid) + "\n", false},
	} {
		require.NoError(t, os.WriteFile(lock, []byte(c.line), 0o644))
		_, err := s.Record(change(".claude/a.json", `{"v":`+strconv.Itoa(i)+`}`, t0.Add(time.Duration(i+1)*time.Second)))
		if c.taken {
			require.NoError(t, err, "%q is taken over at once", c.line)
			_, err = os.Lstat(lock)
			require.True(t, errors.Is(err, os.ErrNotExist), "the lock is gone after the rename")
		} else {
			require.True(t, errors.Is(err, state.ErrLocked), "%q is kept: %v", c.line, err)
		}
	}
}

// TestRefLockNamesHolder: the lock a writer holds names it whole, and
// reads back as this process, which is not gone.
func TestRefLockNamesHolder(t *testing.T) {
	_, s, lock := lockedRepo(t)
	require.NoError(t, os.Remove(lock))
	l, err := s.lockRef(s.StateRef())
	require.NoError(t, err)
	defer l.release()
	holder, flocked := lockHolder(lock)
	require.Equal(t, proc.Self(), holder)
	require.True(t, flocked)
	require.False(t, proc.Gone(holder))
	require.True(t, flockHeld(lock))
}
