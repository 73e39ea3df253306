package gitstore

import (
	"bytes"
	"os/exec"

	"github.com/go-git/go-git/v5/plumbing"
)

// ReadCheckoutForm returns the bytes path had in commit as a checkout of
// that commit would write them into the work tree. A commit strata wrote
// holds the work tree's own bytes (recorded as they were): those are
// returned as they are. A commit of the user's holds what git stores —
// the clean form — so it is read through git's own conversion, `git
// cat-file --filters`: end-of-line conversion (eol=crlf, core.autocrlf),
// ident, working-tree-encoding, as the current .gitattributes and config
// ask. (A file behind a filter= driver is never kept.) Without git, or when
// git fails, the stored bytes are returned: as before, never worse.
func (s *Store) ReadCheckoutForm(commit, path string) ([]byte, error) {
	data, err := s.ReadFile(commit, path)
	if err != nil || s.root == "" {
		return data, err
	}
	c, err := s.resolve(commit)
	if err != nil || s.byStrata(c) {
		return data, nil
	}
	cmd := exec.Command("git", "cat-file", "--filters", c.String()+":"+path)
	cmd.Dir = s.root
	var out bytes.Buffer
	cmd.Stdout = &out
	if cmd.Run() != nil {
		return data, nil
	}
	return out.Bytes(), nil
}

// byStrata reports whether commit c is one strata wrote (its author is
// strata's identity). Any failure to read it is false.
func (s *Store) byStrata(c plumbing.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, raw, err := s.readObject(c)
	if err != nil {
		return false
	}
	head, _, _ := bytes.Cut(raw, []byte("\n\n"))
	return bytes.Contains(head, []byte("\nauthor "+identity+" "))
}
