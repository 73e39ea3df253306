package odb

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"

	"github.com/strata-dev/strata/state"
)

// A repository made with `git clone --shared` or `--reference` names in
// objects/info/alternates the other objects directories it reads objects
// from. A DB reads them as git does (`link_alt_odb_entries`): one path a
// line; a line starting with '#' and an empty line are skipped; a line
// starting with '"' is a C-quoted path; a relative path is relative to the
// objects directory whose file names it; each directory's own alternates
// are linked right after it, down to a depth of maxAltDepth; a directory
// that does not exist, or is already linked (or is the DB's own), is
// skipped. Objects are only read from an alternate, never written to one.
// GIT_ALTERNATE_OBJECT_DIRECTORIES (set by git for a receive hook's
// quarantine) is not read.

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
		db.link(db.dir, 0, seen)
	}
	return db.alts
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
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		path := altPath(string(line), objdir)
		key := canonicalDir(path)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		a := Open(path)
		a.root = db
		db.alts = append(db.alts, a)
		db.link(path, depth+1, seen)
	}
}

// altPath is the directory one line of objdir's alternates file names, or
// "" for a line that names none.
func altPath(line, objdir string) string {
	if line == "" || line[0] == '#' {
		return ""
	}
	if line[0] == '"' {
		p, err := strconv.Unquote(line)
		if err != nil {
			return ""
		}
		line = p
	}
	if !filepath.IsAbs(line) {
		line = filepath.Join(objdir, line)
	}
	return filepath.Clean(line)
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
