package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ReadCheckoutForm returns the bytes path had in commit as a checkout of
// that commit would write them into the work tree. A commit strata wrote
// holds the work tree's own bytes (recorded as they were): those are
// returned as they are. A commit of the user's holds what git stores —
// the clean form — so it is read through git's own conversion, `git
// cat-file --filters`: end-of-line conversion (eol=crlf, core.autocrlf),
// ident, working-tree-encoding, as the current .gitattributes and config
// ask. (A file behind a filter= driver is kept only when a rule names it.)
// Without git the stored bytes are returned; when git fails, as `git
// checkout` would, the error says so and nothing is returned. A stored
// version over limit bytes is refused as ReadFile refuses it, before git
// is asked.
func (s *Store) ReadCheckoutForm(commit, path string, limit int64) ([]byte, error) {
	data, err := s.ReadFile(commit, path, limit)
	if err != nil || s.root == "" {
		return data, err
	}
	c, err := s.resolve(commit)
	if err != nil || s.byStrata(c) {
		return data, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return data, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), FilterTimeout)
	defer cancel()
	out, err := s.gitRaw(ctx, nil, "cat-file", "--filters", c.String()+":"+path)
	if err != nil {
		// git checkout would fail too (a required smudge filter that
		// fails, one that hangs): nothing is written
		if ctx.Err() != nil {
			err = fmt.Errorf("git cat-file: no answer after %s", FilterTimeout)
		}
		return nil, fmt.Errorf("%s: not restored, as git checkout would fail: %w", path, err)
	}
	return out, nil
}

// FilterTimeout bounds git's conversion of one file for a restore (a
// smudge filter that never answers).
var FilterTimeout = time.Minute

// StrataCommit reports whether commit (a hash) is one strata wrote (see
// byStrata).
func (s *Store) StrataCommit(commit string) bool {
	return plumbing.IsHash(commit) && s.byStrata(plumbing.NewHash(commit))
}

// byStrata reports whether commit c is one strata wrote: its author is
// strata's identity and its message has strata's trailers (every commit
// strata ever wrote has a Strata-Path or Strata-Time line; a user's commit
// under that name alone is still the user's).
// Any failure to read it is false.
func (s *Store) byStrata(c plumbing.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, raw, err := s.readObject(c)
	if err != nil {
		return false
	}
	head, msg, _ := bytes.Cut(raw, []byte("\n\n"))
	return bytes.Contains(head, []byte("\nauthor "+identity+" ")) && bytes.Contains(msg, []byte("\nStrata-"))
}

// RecentHeads returns the commits HEAD pointed at in the last n entries of
// the work tree's HEAD reflog (each entry's old and new commit, newest
// first, each once): what git checked out lately. Nothing when there is no
// reflog (core.logAllRefUpdates=false). Only the end of the file is read.
func (s *Store) RecentHeads(n int) []string {
	return recentInLog(filepath.Join(s.gitDir, "logs", "HEAD"), n)
}

// PastHeads returns the commits ref pointed at in the last n entries of its
// reflog, as RecentHeads does for HEAD: for a remote-tracking ref, which
// Fetch moves with a reflog, the heads the remote had when this machine
// fetched from it.
func (s *Store) PastHeads(ref string, n int) []string {
	return recentInLog(s.logFile(ref), n)
}

// recentInLog returns the old and new commits of the last n entries of the
// reflog file name, newest first, each once; only its end is read.
func recentInLog(name string, n int) []string {
	return headsSince(name, 0, n)
}
