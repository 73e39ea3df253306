package odb

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/gitstore/internal/cquote"
	"github.com/strata-dev/strata/state"
)

// A repository made with `git clone --shared` or `--reference` names in
// objects/info/alternates the other objects directories it reads objects
// from; $GIT_ALTERNATE_OBJECT_DIRECTORIES names more, read before them
// (SetEnvAlternates). A DB reads both as git does (`prepare_alt_odb`,
// `link_alt_odb_entries`): entries (lines of the file, ':'-separated in the
// variable, altEntries) are paths; a relative path is relative to the
// objects directory whose file names it (to the directory git runs in,
// for the variable's); each directory's own alternates are linked right
// after it, down to a depth of maxAltDepth; a directory that does not
// exist, or is already linked (or is the DB's own), is skipped. Objects
// are only read from an alternate, never written to one.

// maxAltDepth is git's bound on a chain of alternates files.
const maxAltDepth = 5

// maxAltFile bounds what is read of one alternates file.
const maxAltFile = 1 << 20

// alternates returns the DBs of the alternates, read on first use. Only
// the DB that was opened links them: an alternate's own alternates are in
// its list already.
func (db *DB) alternates() []*DB {
	if db.root != nil {
		return nil
	}
	if !db.altsRead {
		db.altsRead = true
		seen := map[string]bool{}
		if key := canonicalDir(db.dir); key != "" {
			seen[key] = true
		}
		for _, path := range altPaths(db.env, ':', db.envBase) {
			db.add(path, 0, seen)
		}
		db.link(db.dir, 0, seen)
	}
	return db.alts
}

// SetEnvAlternates has the DB read objects also from the directories list
// names, as $GIT_ALTERNATE_OBJECT_DIRECTORIES does for git (the variable
// git sets for a receive hook, or a user for a clone whose objects are
// elsewhere): its entries are linked first, relative ones taken from
// base. An empty list links none.
func (db *DB) SetEnvAlternates(list, base string) {
	db.env, db.envBase = list, base
	db.alts, db.altsRead = nil, false
}

// link appends the alternates that objdir's info/alternates names, each
// followed by its own.
func (db *DB) link(objdir string, depth int, seen map[string]bool) {
	if depth > maxAltDepth {
		return
	}
	// none, not a regular file (never a FIFO to block on, even one put
	// there after a check), or larger than any alternates file git writes
	data, err := state.ReadRegular(filepath.Join(objdir, "info", "alternates"), maxAltFile, true)
	if err != nil {
		return
	}
	for _, path := range altPaths(string(data), '\n', objdir) {
		db.add(path, depth, seen)
	}
}

// add links the objects directory path, and then its own alternates, one
// level deeper than depth, unless it is not a directory or is linked
// already.
func (db *DB) add(path string, depth int, seen map[string]bool) {
	key := canonicalDir(path)
	if key == "" || seen[key] {
		return
	}
	seen[key] = true
	a := Open(path)
	a.root = db
	db.alts = append(db.alts, a)
	db.link(path, depth+1, seen)
}

// altPaths is the directories list names, its entries separated by sep,
// as git's parse_alt_odb_entry reads them: an entry starting with '#' is
// a comment; one starting with a well-formed C-quoted string is that
// string unquoted (the character after its closing quote is taken for the
// separator, as git takes it), a badly quoted one is read as it is; an
// empty one names nothing. A relative path is taken from base.
func altPaths(list string, sep byte, base string) []string {
	var out []string
	for list != "" {
		end := strings.IndexByte(list, sep)
		if end < 0 {
			end = len(list)
		}
		entry := list[:end]
		if list[0] == '#' {
			entry = ""
		} else if text, rest, ok := cquote.Unquote(list); ok {
			entry, end = text, len(list)-len(rest)
		}
		if end < len(list) {
			end++
		}
		list = list[end:]
		if entry == "" {
			continue
		}
		if !filepath.IsAbs(entry) {
			entry = filepath.Join(base, entry)
		}
		out = append(out, filepath.Clean(entry))
	}
	return out
}

// canonicalDir is path with its symbolic links resolved, or "" when it is
// not a directory.
func canonicalDir(path string) string {
	if path == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}

// top is the DB that links the alternates: a ref delta's base is looked up
// in the whole object store, as git does, not only in the pack's own
// directory.
func (db *DB) top() *DB {
	if db.root != nil {
		return db.root
	}
	return db
}
