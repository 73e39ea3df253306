// Package buildinfo says which source a binary was built from, so that
// strata and its companion strata-serve can tell whether they were built
// together.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// ID names the build: stamped, the version make stamps into both binaries
// (git describe --always --dirty); else the VCS revision Go recorded (see
// Revision); else "".
func ID(stamped string) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	return Revision()
}

// Revision is the VCS revision the binary was built from, with "+dirty"
// when the work tree had changes, or "" when the build recorded none (a
// build outside a repository, -buildvcs=false, go install of a module
// version).
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

// Mismatch reports whether two build ids name different builds. Ids come
// in two forms: make's `git describe --always --dirty` (a short commit
// id, or TAG-N-gID, with -dirty) and Go's recorded revision (the full
// commit id, with +dirty). Two commit ids match when one begins the other
// and both or neither are dirty (two dirty builds of one commit cannot be
// told apart); an id without a commit (an exact tag) matches only itself,
// and anything matches an unknown ("") build.
func Mismatch(a, b string) bool {
	if a == "" || b == "" || a == b {
		return false
	}
	ca, da := commitOf(a)
	cb, db := commitOf(b)
	if ca == "" || cb == "" {
		return ca == "" && cb == "" // two tags that differ; a tag and a commit cannot be compared
	}
	if da != db {
		return true
	}
	return !strings.HasPrefix(ca, cb) && !strings.HasPrefix(cb, ca)
}

// commitOf returns the commit id in a build id ("" when it names none) and
// whether the build was dirty.
func commitOf(id string) (commit string, dirty bool) {
	for _, suf := range []string{"-dirty", "+dirty"} {
		if s, ok := strings.CutSuffix(id, suf); ok {
			id, dirty = s, true
		}
	}
	if i := strings.LastIndex(id, "-g"); i >= 0 {
		id = id[i+2:]
	}
	if len(id) < 7 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", dirty
	}
	return id, dirty
}
