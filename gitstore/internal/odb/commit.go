package odb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Commit is the part of a commit object strata reads.
type Commit struct {
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	Time    int64  // committer time, Unix seconds
	TZ      string // committer time zone as written, e.g. "+0100"
	Message string // everything after the blank line ending the header
}

// ParseCommit parses a raw commit object as git reads one
// (parse_commit_buffer): the first line is the tree, the parent lines are
// those right after it, and the committer line is the first one; header
// lines it does not read (author, gpgsig, encoding...) are skipped, and a
// later tree, parent or committer line is not read either. A peer could
// otherwise write a second tree line after the committer line, which git
// and git fsck never look at, and have strata check, show and restore a
// tree other than the one git keeps and pushes on (attack35c M1). The tree
// and parent lines must hold full hexadecimal hashes.
func ParseCommit(raw []byte) (Commit, error) {
	var ci Commit
	first, parents, committer := true, true, false
	for len(raw) > 0 {
		nl := bytes.IndexByte(raw, '\n')
		if nl < 0 {
			return ci, errors.New("corrupt commit")
		}
		line := raw[:nl]
		raw = raw[nl+1:]
		if len(line) == 0 {
			ci.Message = string(raw)
			break
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch {
		case first:
			first = false
			if string(key) != "tree" {
				return ci, errors.New("commit without tree")
			}
			h, ok := parseHash(val)
			if !ok {
				return ci, errors.New("corrupt commit tree")
			}
			ci.Tree = h
			continue
		case parents && string(key) == "parent":
			h, ok := parseHash(val)
			if !ok {
				return ci, errors.New("corrupt commit parent")
			}
			ci.Parents = append(ci.Parents, h)
			continue
		}
		parents = false
		if string(key) != "committer" || committer {
			continue
		}
		committer = true
		// Name <email> 1700000000 +0000
		gt := bytes.LastIndexByte(val, '>')
		if gt < 0 {
			return ci, errors.New("corrupt committer")
		}
		f := strings.Fields(string(val[gt+1:]))
		if len(f) >= 1 {
			t, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return ci, errors.New("corrupt committer time")
			}
			ci.Time = t
		}
		if len(f) >= 2 {
			ci.TZ = f[1]
		}
	}
	if ci.Tree.IsZero() {
		return ci, errors.New("commit without tree")
	}
	return ci, nil
}

// parseHash parses exactly 40 hexadecimal digits.
func parseHash(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 2*len(h) {
		return h, false
	}
	_, err := hex.Decode(h[:], b)
	return h, err == nil
}
