package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The bounds of a path strata keeps. Every kept path is shallow (the
// built-in ones have at most three elements; a rule's glob has as many as it
// spells out), while a remote's tree may nest to any depth: a chain of
// 30 000 one-entry trees packs into 2 MB, and each path built along it costs
// memory and time with the square of its depth. git itself stops at
// core.maxTreeDepth (4096 since 2.44), a bound against stack overflow, not
// against work. 64 levels leave a user's rules 20 times the depth of the
// built-in paths; 4096 bytes is Linux's PATH_MAX, past which a path could
// not be opened in one piece anyway.
const (
	MaxPathDepth = 64   // elements of a path (the root's trees nest at most 63 deep)
	MaxPathLen   = 4096 // bytes of a path
)

// CheckPath is the one check of a path strata records, reads from a
// remote's tree, or takes from the configuration: slash-separated and
// relative, with no empty, "." or ".." element, no NUL byte, and no element
// that git refuses as a name for ".git" on any file system. That is at least
// as strict as git's own verify_path with core.protectNTFS and
// core.protectHFS on: ".git" in any case, the NTFS forms (".git" followed by
// dots or spaces, an alternate data stream ".git:...", the short name
// "git~1", and backslash as a separator) and the HFS+ forms (".git" with
// ignorable code points such as U+200C inside). A path that passes can be
// written in a git tree that `git fsck --strict` accepts. It also bounds
// the path's size: at most MaxPathDepth elements and MaxPathLen bytes.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case len(p) > MaxPathLen:
		return fmt.Errorf("path of %d bytes, over %d", len(p), MaxPathLen)
	case strings.Count(p, "/") >= MaxPathDepth:
		return fmt.Errorf("path of %d elements, over %d", strings.Count(p, "/")+1, MaxPathDepth)
	case strings.IndexByte(p, 0) >= 0:
		return errors.New("NUL in path")
	case p[0] == '/':
		return errors.New("absolute path")
	}
	for _, el := range strings.Split(p, "/") {
		if err := CheckName(el); err != nil {
			return err
		}
	}
	return nil
}

// ErrDotGit is a path element that some file system takes for ".git"
// (CheckName); callers match it to say "inside .git" rather than "bad path".
var ErrDotGit = errors.New(".git path element")

// CheckName checks one element of a path, as a tree entry's name: not
// empty, ".", "..", a "/" or NUL, nor any name of ".git" (see CheckPath).
func CheckName(el string) error {
	switch {
	case el == "":
		return errors.New("empty path element")
	case el == "." || el == "..":
		return fmt.Errorf("%q path element", el)
	case strings.IndexByte(el, '/') >= 0:
		return errors.New("name holds a slash")
	case strings.IndexByte(el, 0) >= 0:
		return errors.New("NUL in path")
	}
	// On NTFS a backslash separates directories, so each part between
	// backslashes is a name of its own there.
	for _, part := range strings.Split(el, `\`) {
		if part == "." || part == ".." {
			return fmt.Errorf("%q path element (backslash-separated)", part)
		}
		if isNTFSDotGit(part) || isHFSDotGit(part) {
			return ErrDotGit
		}
	}
	return nil
}

// isNTFSDotGit reports whether NTFS takes name for ".git": ".git" or
// "git~1" in any case, followed by nothing but dots and spaces, or by ':'
// (an alternate data stream). It follows git's is_ntfs_dotgit.
func isNTFSDotGit(name string) bool {
	var rest string
	switch {
	case len(name) >= 4 && name[0] == '.' && strings.EqualFold(name[1:4], "git"):
		rest = name[4:]
	case len(name) >= 5 && strings.EqualFold(name[:3], "git") && name[3:5] == "~1":
		rest = name[5:]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ':':
			return true
		case '.', ' ':
		default:
			return false
		}
	}
	return true
}

// hfsIgnorable are the code points HFS+ drops when it compares names.
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// isHFSDotGit reports whether HFS+ takes name for ".git": ".git" in any case
// once the ignorable code points are dropped. It follows git's is_hfs_dotgit.
func isHFSDotGit(name string) bool {
	var b []rune
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && n <= 1 {
			return false // not UTF-8: HFS+ cannot take it for ".git"
		}
		i += n
		if hfsIgnorable(r) {
			continue
		}
		if len(b) == 4 {
			return false
		}
		b = append(b, r)
	}
	return len(b) == 4 && b[0] == '.' && strings.EqualFold(string(b[1:]), "git")
}

// FoldName is the name el as the case-insensitive file systems compare
// names (macOS's APFS and HFS+, Windows' NTFS), so that a test of a name
// that matters (Claude Code's settings.json, a *.local.json file) cannot be
// passed by a variant that is the same file there: the ignorable code
// points HFS+ drops are dropped, an alternate data stream (":...") and the
// dots and spaces NTFS drops at the end are cut, and the rest is case-folded
// (upper, then lower case: "ſ", "K" (the Kelvin sign) and "ı" fold with the
// ASCII letters, as one or the other file system folds them). Names are
// compared folded on every file system, not only where git's
// core.ignorecase is set: a repository cloned on Linux may be used later on
// a Mac (docs/contract.md §9).
func FoldName(el string) string {
	var b strings.Builder
	for _, r := range el {
		if !hfsIgnorable(r) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, ". ")
	return strings.ToLower(strings.ToUpper(s))
}

// ShortNameOf reports whether el may be an NTFS 8.3 short name of the long
// name long on Windows (where 8.3 names are on, as on system volumes): the
// same file there. Windows makes one from the long name with its spaces
// and dots but the last dot dropped: at most six characters of the stem,
// "~" and a number, and up to three of the extension (settings.json is
// SETTIN~1.JSO, .claude is CLAUDE~1), compared folded. A short name of
// another file that starts the same is taken too: the test fails closed.
func ShortNameOf(el, long string) bool {
	el = FoldName(el)
	stem, ext, _ := strings.Cut(el, ".")
	tilde := strings.LastIndexByte(stem, '~')
	if tilde < 1 || tilde > 6 || tilde == len(stem)-1 || len(ext) > 3 || strings.Contains(ext, ".") {
		return false
	}
	for _, c := range stem[tilde+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	long = FoldName(long)
	lstem, lext := long, ""
	if i := strings.LastIndexByte(long, '.'); i > 0 {
		lstem, lext = long[:i], long[i+1:]
	}
	lstem = strings.NewReplacer(".", "", " ", "").Replace(lstem)
	return strings.HasPrefix(lstem, stem[:tilde]) && strings.HasPrefix(lext, ext) && (ext != "" || lext == "")
}

// Within reports whether the file-system name is dir or inside it. Both
// are compared as given, cleaned: the caller resolves symbolic links first
// when the question is where a file really is.
func Within(dir, name string) bool {
	rel, err := filepath.Rel(dir, name)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
