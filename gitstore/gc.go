package gitstore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
)

// GCInterval is how many recorded commits pass between two background
// `git gc --auto` runs. Loose objects cost about 17 KB per change on disk
// against under 1 KB packed (docs/contract.md §4); git packs them, go-git's
// RepackObjects and Prune are never used on a user's repository.
var GCInterval = 1000

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
		f, err := os.OpenFile(counter, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if os.IsNotExist(err) {
			if os.MkdirAll(filepath.Dir(counter), 0o755) != nil {
				return
			}
			f, err = os.OpenFile(counter, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		}
		if err != nil {
			return
		}
		s.counter = f
	}
	_, err := s.counter.Write(bytes.Repeat([]byte{'.'}, n))
	fi, serr := s.counter.Stat()
	if err != nil || serr != nil || fi.Size() < int64(GCInterval) {
		return
	}
	s.counter.Close()
	s.counter = nil
	taken := counter + ".gc"
	if os.Rename(counter, taken) != nil {
		return // another process took it
	}
	os.Remove(taken)
	startGC(s.commonDir)
}

func sameFile(f *os.File, fi os.FileInfo) bool {
	ffi, err := f.Stat()
	return err == nil && os.SameFile(ffi, fi)
}

// gcStarted counts background gc runs; tests read it.
var gcStarted atomic.Int64

// startGC runs `git gc --auto` on the repository, detached, without
// waiting. Without a git binary on PATH it does nothing.
func startGC(commonDir string) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return
	}
	cmd := exec.Command(bin, "--git-dir="+commonDir, "gc", "--auto", "--quiet")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	detach(cmd)
	if cmd.Start() != nil {
		return
	}
	gcStarted.Add(1)
	go cmd.Wait() // reap it; nobody waits for the result
}
