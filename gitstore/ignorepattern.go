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
}

// parseIgnoreLines reads the text of one ignore file whose patterns apply
// in the folder base ("" for the root; slash-separated): a line at a time,
// without a final "\r", blank lines and "#" comments skipped, trailing
// spaces dropped unless quoted with "\". Under fold base is lowercased (the
// path it is compared with is).
func parseIgnoreLines(data, base string, fold bool) []ignorePattern {
	if fold {
		base = strings.ToLower(base)
	}
	var ps []ignorePattern
	for rest := data; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
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
func (p ignorePattern) matches(rel string, isDir, fold bool) bool {
	if p.mustBeDir && !isDir {
		return false
	}
	if p.noDir {
		name := rel[strings.LastIndexByte(rel, '/')+1:]
		if p.base != "" && !strings.HasPrefix(rel, p.base+"/") {
			return false
		}
		return p.wild(name, false, fold)
	}
	if p.base != "" {
		rest, ok := strings.CutPrefix(rel, p.base+"/")
		if !ok {
			return false
		}
		rel = rest
	}
	return p.wild(rel, true, fold)
}

func (p ignorePattern) wild(text string, pathname, fold bool) bool {
	budget := wildBudget
	m := dowild(p.pattern, text, pathname, fold, &budget)
	if budget < 0 {
		return !p.negative
	}
	return m == wmMatch
}

// ignoreList is the patterns that apply in one folder, the deeper files'
// after the shallower ones'.
type ignoreList []ignorePattern

// excluded reports whether the last pattern naming rel ignores it (git's
// last_matching_pattern: the last line of the deepest file first).
func (l ignoreList) excluded(rel string, isDir, fold bool) bool {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].matches(rel, isDir, fold) {
			return !l[i].negative
		}
	}
	return false
}
