// Package buildinfo says which source a binary was built from, so that
// strata and its companion strata-serve can tell whether they were built
// together.
package buildinfo

import "runtime/debug"

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

// Mismatch reports whether two revisions name different builds: both are
// known and differ. A dirty build matches only the same dirty revision
// (two dirty builds of one revision cannot be told apart).
func Mismatch(a, b string) bool { return a != "" && b != "" && a != b }
