package gitstore

import "strings"

// ignorePattern is one line of an ignore file, read as git's dir.c reads it
// (add_patterns_from_buffer, parse_path_pattern) and matched with git's own
// wildmatch (match_basename, match_pathname): go-git's gitignore package
// reads some patterns git honours otherwise (`/**.env`, `prod.en[!x]`,
// `prod.[[:alpha:]]nv`), and a file it took for not ignored was recorded,
// and published once an earlier HEAD's rules were all that kept it private
// (attack20-ignore F1).
type ignorePattern struct {
	pattern   string // without "!", the trailing "/" and a leading "/"
	base      string // the folder of the file it comes from ("" for the root and the files of this machine), folded
	negative  bool   // "!pattern": re-includes
	mustBeDir bool   // "pattern/": only a folder
	noDir     bool   // no "/" in it: matches the base name at any depth below base
	prefix    int    // the length of its literal start, before any of *?[\ (git's simple_length)
}

// parseIgnoreLines reads the text of one ignore file whose patterns apply
// in the folder base ("" for the root; slash-separated): a line at a time,
// without a final "\r", blank lines and "#" comments skipped, trailing
// spaces dropped unless quoted with "\". Under fold base is lowercased (the
// path it is compared with is).
func parseIgnoreLines(data, base string, fold bool) []ignorePattern {
	if fold {
		base = asciiLower(base)
	}
	var ps []ignorePattern
	for rest := data; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i] // git reads a line as a C string: up to its NUL (attack20-ignore-verify N1)
		}
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(line)
		p := ignorePattern{base: base}
		if line != "" && line[0] == '!' {
			p.negative = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			p.mustBeDir = true
			line = line[:len(line)-1]
		}
		p.noDir = !strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			continue
		}
		p.pattern = line
		p.prefix = literalStart(line)
		ps = append(ps, p)
	}
	return ps
}

// trimTrailingSpaces is git's trim_trailing_spaces: trailing blanks go,
// unless a "\" quotes the last of them.
func trimTrailingSpaces(s string) string {
	end := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if end == len(s) {
				end = i
			}
		case '\\':
			i++
			end = len(s)
			if i >= len(s) {
				return s
			}
		default:
			end = len(s)
		}
	}
	return s[:end]
}

// matches reports whether the pattern names rel (slash-separated, from the
// work tree's root, folded under fold), a folder when isDir. A match that
// wildmatch gives up on (too many steps) counts as a match for a pattern
// that ignores and as none for one that re-includes: the file is then
// ignored, the safe side.
func (p ignorePattern) matches(rel string, isDir, fold bool, budget *int) bool {
	if p.mustBeDir && !isDir {
		return false
	}
	if p.noDir {
		name := rel[strings.LastIndexByte(rel, '/')+1:]
		if p.base != "" && !strings.HasPrefix(rel, p.base+"/") {
			return false
		}
		return p.wild(p.pattern, name, false, fold, budget)
	}
	if p.base != "" {
		rest, ok := strings.CutPrefix(rel, p.base+"/")
		if !ok {
			return false
		}
		rel = rest
	}
	// git's match_pathname compares the literal start by itself and
	// matches only the rest: in "foo**/bar" the "**" then starts the
	// pattern, spans folders and may be empty ("foobar" is ignored), where
	// the whole pattern read by wildmatch would take it for one "*"
	// (attack20-ignore-verify N2).
	pattern, rel, may, done := cutLiteralStart(p.pattern, p.prefix, rel, fold)
	if !may || done {
		return done
	}
	return p.wild(pattern, rel, true, fold, budget)
}

// literalStart is git's simple_length: how long pattern's start is before
// any of *?[\.
func literalStart(pattern string) int {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return i
	}
	return len(pattern)
}

// cutLiteralStart is the step of git's match_pathname (for ignore and
// attribute patterns alike) that compares the literal start of a pattern
// with a slash by itself (prefix bytes): may is false when it differs,
// done true when it is the whole pattern and the whole path; otherwise the
// rest of each is for wildmatch.
func cutLiteralStart(pattern string, prefix int, text string, fold bool) (p, t string, may, done bool) {
	if prefix == 0 {
		return pattern, text, true, false
	}
	if prefix > len(text) || !sameText(pattern[:prefix], text[:prefix], fold) {
		return "", "", false, false
	}
	p, t = pattern[prefix:], text[prefix:]
	return p, t, true, p == "" && t == ""
}

// wild is wildmatch within budget, the steps left to the matches of one
// command: a match that takes more than wildBudget steps, or more than
// what is left, counts as a match for a pattern that ignores and as none
// for one that re-includes (the file is then ignored, the safe side). A
// tracked file's long name against `!*a*a…*b` lines took the whole budget
// on each line, seconds per command (attack20-ignore-verify N6); the
// command's budget bounds that.
func (p ignorePattern) wild(pattern, text string, pathname, fold bool, budget *int) bool {
	if *budget <= 0 {
		return !p.negative
	}
	steps := min(wildBudget, *budget)
	left := steps
	m := dowild(pattern, text, pathname, fold, &left)
	*budget -= steps - max(left, 0)
	if left < 0 {
		return !p.negative
	}
	return m == wmMatch
}

// sameText compares a pattern's literal start with a path's, case aside
// under fold (ASCII, as git folds).
func sameText(a, b string, fold bool) bool {
	if fold {
		return asciiLower(a) == asciiLower(b)
	}
	return a == b
}

// asciiLower lowercases the ASCII letters of s only, as git folds case
// under core.ignorecase: strings.ToLower folded "Ü" too, so that a
// pattern naming .claude/Übergabe.json matched nothing for strata while git
// ignored the file (attack20-ignore-verify N5).
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ignoreBudget is the wildmatch steps one Ignores may take in all (a
// command, a watcher's batch): ordinary rules take thousands.
var ignoreBudget = 5_000_000

// ignoreList is the patterns that apply in one folder, the deeper files'
// after the shallower ones'.
type ignoreList []ignorePattern

// excluded reports whether the last pattern naming rel ignores it (git's
// last_matching_pattern: the last line of the deepest file first).
func (l ignoreList) excluded(rel string, isDir, fold bool, budget *int) bool {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].matches(rel, isDir, fold, budget) {
			return !l[i].negative
		}
	}
	return false
}
