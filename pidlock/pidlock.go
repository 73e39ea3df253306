// Package pidlock is the single-watcher lock: an flock(2) on a file (strata
// uses .git/strata/watch.lock) that says which process holds it, since when,
// and how it is doing. The kernel releases an flock when its holder dies, so a
// watcher killed with SIGKILL leaves no stale lock behind, and a reused pid
// cannot make a dead holder look alive.
package pidlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/state"
)

// Info is what the holder writes into the lock file.
type Info struct {
	PID   int             `json:"pid"`
	Since time.Time       `json:"since"`
	Host  string          `json:"host,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty"` // the holder's status, set with Lock.Update
}

// LockedError is returned by Acquire when another live process holds the
// lock. It matches state.ErrLocked with errors.Is.
type LockedError struct {
	Path   string
	Holder Info // zero when the holder has not written its Info yet
}

func (e *LockedError) Error() string {
	if e.Holder.PID == 0 {
		return "another watcher is running (lock " + e.Path + ")"
	}
	host := ""
	if h, _ := os.Hostname(); e.Holder.Host != "" && e.Holder.Host != h {
		host = " on " + e.Holder.Host
	}
	return fmt.Sprintf("another watcher is running (pid %d%s, since %s)",
		e.Holder.PID, host, e.Holder.Since.Format(time.RFC3339))
}

func (e *LockedError) Unwrap() error { return state.ErrLocked }

// Lock is a held lock. Its methods are safe for concurrent use.
type Lock struct {
	mu   sync.Mutex // serialises Update and Release: both write the file
	f    *os.File   // nil once released
	info Info
}

// Acquire creates path and its directories if needed, takes an exclusive
// flock on it without waiting, and writes the caller's Info into it. If another
// process (or another open file of this one) holds it, the error is a
// *LockedError wrapping state.ErrLocked that names the holder.
//
// The file is opened close-on-exec (as os.OpenFile always does), so a child
// such as git does not inherit the lock and keep it past the watcher's death.
// The file is never removed or replaced: the lock lives on its inode, and a
// new inode at the same path would let a second process lock that one.
// The file and the directories made for it get their modes from sh, as
// git's own files in the git directory do.
func Acquire(path string, sh gitperm.Shared) (*Lock, error) {
	f, err := sh.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW) // a link planted there is never followed (nor its target made)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	// A Read probes with a brief shared lock; retrying a few times keeps
	// such a probe from looking like a holder.
	for try := 0; ; try++ {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || try == 5 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder, _ := readInfo(path)
			return nil, &LockedError{Path: path, Holder: holder}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	l := &Lock{f: f, info: Info{PID: os.Getpid(), Since: time.Now().Truncate(time.Second), Host: host}}
	if err := l.write(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// Info returns what the lock file says about this holder.
func (l *Lock) Info() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// Update replaces the holder's status written in the lock file with status
// encoded as JSON, for `strata status` to show. It fails after Release.
func (l *Lock) Update(status any) error {
	data, err := json.Marshal(status)
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("lock: released")
	}
	l.info.Extra = data
	return l.write()
}

// write rewrites the file in place (not by rename, which would replace the
// locked inode). A reader may see a torn write; Read retries until the JSON
// is whole. No fsync: the file is a display, and a crash releases the lock.
func (l *Lock) write() error {
	data, err := json.Marshal(l.info)
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	data = append(data, '\n')
	if _, err := l.f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if err := l.f.Truncate(int64(len(data))); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

// Release empties the lock file and releases the lock. It is idempotent.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	// Emptied while still held, so nobody reads a departed holder's Info.
	terr := l.f.Truncate(0)
	cerr := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	if err := errors.Join(terr, cerr); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

// Read reports who holds the lock at path. held is false when nobody does
// (including when the file does not exist); it finds out by trying a shared
// flock without waiting, which succeeds only when there is no exclusive holder.
// Info is zero if the holder has not written it yet.
func Read(path string) (info Info, held bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, fmt.Errorf("lock: %w", err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		return Info{}, false, nil // closing f releases the probe
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return Info{}, false, fmt.Errorf("lock %s: %w", path, err)
	}
	info, err = readInfo(path)
	return info, true, err
}

// readInfo reads the holder's Info, retrying briefly over a torn write.
func readInfo(path string) (Info, error) {
	var err error
	for range 10 {
		var data []byte
		data, err = os.ReadFile(path)
		if err != nil {
			return Info{}, fmt.Errorf("lock: %w", err)
		}
		if len(data) == 0 {
			return Info{}, nil // the holder has not written yet
		}
		var info Info
		if err = json.Unmarshal(data, &info); err == nil {
			return info, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return Info{}, fmt.Errorf("lock %s: %w", path, err)
}

// Hold takes an flock on path (created with its directories if needed):
// shared, or exclusive when exclusive is set, waiting up to wait for a
// holder of the other kind to let go (as long as it takes when wait is
// negative). release lets it go. Past wait the error is a *HeldError
// wrapping state.ErrLocked. The kernel releases the lock when its holder
// dies, so a killed holder never blocks anyone. What it creates gets its
// mode from sh.
func Hold(path string, sh gitperm.Shared, exclusive bool, wait time.Duration) (release func(), err error) {
	f, err := sh.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW) // a link planted there is never followed (nor its target made)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ELOOP) {
		// a folder or a link where strata keeps a plain lock file: strata
		// never makes one, and removing it loses nothing
		return nil, fmt.Errorf("lock: %w (strata keeps an empty file there and never makes a folder or link: look at it, remove it, and run the command again)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if wait < 0 {
		for err = unix.Flock(int(f.Fd()), how); errors.Is(err, unix.EINTR); err = unix.Flock(int(f.Fd()), how) {
		}
	} else {
		deadline := time.Now().Add(wait)
		for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
			err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
			if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
				break
			}
			time.Sleep(pause)
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &HeldError{Path: path}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// HeldError is Hold's error when the lock stayed held past the wait.
type HeldError struct{ Path string }

func (e *HeldError) Error() string { return e.Path + ": held by another process" }

func (e *HeldError) Unwrap() error { return state.ErrLocked }
