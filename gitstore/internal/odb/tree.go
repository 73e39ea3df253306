package odb

import (
	"bytes"
	"errors"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// EmptyTree is the hash of the tree with no entries.
var EmptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// Entry is one entry of a tree.
type Entry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// IsDir reports whether e names a subtree.
func (e Entry) IsDir() bool { return e.Mode == filemode.Dir }

// Less orders tree entries as git does: a directory sorts as if its name
// ended in "/". A tree in any other order fails `git fsck --strict`.
func Less(a, b Entry) bool {
	an, bn := a.Name, b.Name
	if a.IsDir() {
		an += "/"
	}
	if b.IsDir() {
		bn += "/"
	}
	return an < bn
}

// EncodeTree returns the canonical encoding of entries, sorting them first.
// A mode other than a directory, an executable, a symbolic link or a
// gitlink is written as a regular file.
func EncodeTree(entries []Entry) []byte {
	sort.Slice(entries, func(i, j int) bool { return Less(entries[i], entries[j]) })
	// Sized exactly: a batch of records keeps every version of a tree it
	// makes until it is written, and each byte allocated is a fresh page
	// somewhere (2 000 trees of 1 000 entries in a batch of 1 000 changes).
	n := 0
	for _, e := range entries {
		n += len(treeMode(e.Mode)) + 1 + len(e.Name) + 1 + len(e.Hash)
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = append(b, treeMode(e.Mode)...)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b
}

// treeMode is how a tree spells mode: a mode other than a directory, an
// executable, a symbolic link or a gitlink is a regular file.
func treeMode(m filemode.FileMode) string {
	switch m {
	case filemode.Dir:
		return "40000" // git's canonical spelling; "040000" fails fsck --strict
	case filemode.Executable:
		return "100755"
	case filemode.Symlink:
		return "120000"
	case filemode.Submodule:
		return "160000"
	}
	return "100644"
}

var (
	errCorruptTree = errors.New("corrupt tree")
	errTreeMode    = errors.New("corrupt tree mode")
)

// DecodeTree parses a raw tree object. It checks the framing only (an octal
// mode, a name ended by NUL, a 20-byte hash); names are returned as they are.
func DecodeTree(raw []byte) ([]Entry, error) {
	var out []Entry
	for len(raw) > 0 {
		m, name, hash, rest, err := nextEntry(raw)
		if err != nil {
			return nil, err
		}
		e := Entry{Name: string(name), Mode: m}
		copy(e.Hash[:], hash)
		out = append(out, e)
		raw = rest
	}
	return out, nil
}

// nextEntry splits the first entry off a raw tree: its mode, name and hash,
// and the rest of the tree, with DecodeTree's framing checks.
func nextEntry(raw []byte) (m filemode.FileMode, name, hash, rest []byte, err error) {
	sp := bytes.IndexByte(raw, ' ')
	if sp < 0 {
		return 0, nil, nil, nil, errCorruptTree
	}
	m, ok := parseMode(raw[:sp])
	if !ok {
		return 0, nil, nil, nil, errTreeMode
	}
	raw = raw[sp+1:]
	nul := bytes.IndexByte(raw, 0)
	if nul < 0 || len(raw) < nul+1+20 {
		return 0, nil, nil, nil, errCorruptTree
	}
	return m, raw[:nul], raw[nul+1 : nul+21], raw[nul+21:], nil
}

// FindRaw finds the entry called name in a raw tree without decoding the
// others: for a look at one path in many different snapshots, where decoding
// (and caching) every entry of each would cost more than the look.
func FindRaw(raw []byte, name string) (Entry, bool, error) {
	for len(raw) > 0 {
		m, n, hash, rest, err := nextEntry(raw)
		if err != nil {
			return Entry{}, false, err
		}
		if string(n) == name {
			e := Entry{Name: name, Mode: m}
			copy(e.Hash[:], hash)
			return e, true, nil
		}
		raw = rest
	}
	return Entry{}, false, nil
}

// parseMode parses an octal mode of at most 7 digits, as git writes them.
func parseMode(b []byte) (filemode.FileMode, bool) {
	if len(b) == 0 || len(b) > 7 {
		return 0, false
	}
	var m uint32
	for _, c := range b {
		if c < '0' || c > '7' {
			return 0, false
		}
		m = m<<3 | uint32(c-'0')
	}
	return filemode.FileMode(m), true
}

// Find returns the index of name in entries (as a file or a directory).
func Find(entries []Entry, name string) (int, bool) {
	for i := range entries {
		if entries[i].Name == name {
			return i, true
		}
	}
	return -1, false
}
