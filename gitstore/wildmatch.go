package gitstore

import "strings"

// wildmatch's answers, as git's wildmatch.c gives them: besides a match and
// a mismatch, two ways of telling the callers up the recursion that no
// longer text can match either, which keeps the backtracking linear.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll        // no star above can help
	wmAbortToStarstar // only a "**" above can help
)

// wildmatch reports whether text matches the pattern as git's wildmatch
// matches it: "*" and "?" and "[...]" (with "!" or "^" to negate, ranges and
// "[:class:]") never match "/" when pathname is set (WM_PATHNAME), and then
// "**" spans folders where it stands alone between slashes ("**/x", "a/**",
// "a/**/b"); "\" quotes the next byte; fold compares case-insensitively as
// git does under core.ignorecase (WM_CASEFOLD). It is a port of wildmatch.c,
// byte for byte, so that strata and git agree on what a pattern names.
//
// Unlike git's, it counts its steps: a pattern like "*a*a*a*a*a*a*a*a*b"
// against a long name backtracks for minutes (git check-attr spins too), and
// a clone's .gitattributes must not stall every hook call. Past wildBudget
// steps the pattern is taken as matching, so the line's attributes apply:
// for the filter attribute, the file is then private, the safe side; sync
// asks git itself before publishing anything.
func wildmatch(pattern, text string, pathname, fold bool) bool {
	budget := wildBudget
	m := dowild(pattern, text, pathname, fold, &budget)
	return m == wmMatch || budget < 0
}

// wildBudget is how many steps one match may take: a pattern and a path of
// ordinary lengths take hundreds.
var wildBudget = 200_000

func dowild(p, text string, pathname, fold bool, budget *int) int {
	at := func(s string, i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	low := func(c byte) byte {
		if fold && 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		if *budget--; *budget < 0 {
			return wmAbortAll
		}
		pch, tch := low(p[pi]), low(at(text, ti))
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			pi++
			if tch != at(p, pi) {
				return wmNoMatch
			}
		default:
			if tch != pch {
				return wmNoMatch
			}
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
		case '*':
			matchSlash := !pathname
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2
				for pi++; at(p, pi) == '*'; pi++ {
				}
				next := at(p, pi)
				if pathname && (prev < 0 || p[prev] == '/') && (next == 0 || next == '/' || next == '\\' && at(p, pi+1) == '/') {
					// "a/**/b" matches "a/b" too: the "**/" may stand for nothing.
					if next == '/' && dowild(p[pi+1:], text[ti:], pathname, fold, budget) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				}
			}
			if pi == len(p) { // a trailing star
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmAbortToStarstar
				}
				return wmMatch
			}
			if !matchSlash && p[pi] == '/' { // one star, then a slash: the rest of this folder name
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmAbortAll
				}
				ti += slash
				continue // the slash is consumed by the loop, in p and text
			}
			for tch != 0 {
				if c := p[pi]; c != '*' && c != '?' && c != '[' && c != '\\' {
					// a literal follows: skip to where text has it
					c = low(c)
					for tch = low(at(text, ti)); tch != 0 && (matchSlash || tch != '/') && tch != c; tch = low(at(text, ti)) {
						ti++
					}
					if tch != c {
						return wmNoMatch
					}
				}
				if *budget--; *budget < 0 {
					return wmAbortAll
				}
				if m := dowild(p[pi:], text[ti:], pathname, fold, budget); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarstar {
						return m
					}
				} else if !matchSlash && tch == '/' {
					return wmAbortToStarstar
				}
				ti++
				tch = at(text, ti)
			}
			return wmAbortAll
		case '[':
			pi++
			pch = at(p, pi)
			if pch == '^' {
				pch = '!'
			}
			negated := pch == '!'
			if negated {
				pi++
				pch = at(p, pi)
			}
			var prev byte
			matched := false
			for {
				if pch == 0 {
					return wmAbortAll
				}
				switch {
				case pch == '\\':
					pi++
					if pch = at(p, pi); pch == 0 {
						return wmAbortAll
					}
					matched = matched || tch == pch
				case pch == '-' && prev != 0 && at(p, pi+1) != 0 && at(p, pi+1) != ']':
					pi++
					pch = at(p, pi)
					if pch == '\\' {
						pi++
						if pch = at(p, pi); pch == 0 {
							return wmAbortAll
						}
					}
					upper := tch
					if fold && 'a' <= tch && tch <= 'z' {
						upper = tch - 'a' + 'A'
					}
					matched = matched || prev <= tch && tch <= pch || prev <= upper && upper <= pch
					pch = 0 // no range starts at a range's end
				case pch == '[' && at(p, pi+1) == ':':
					s := pi + 2
					end := s
					for at(p, end) != 0 && p[end] != ']' {
						end++
					}
					if at(p, end) == 0 {
						return wmAbortAll
					}
					if end-s-1 < 0 || p[end-1] != ':' { // no ":]": a plain "["
						matched = matched || tch == '['
						break
					}
					in, ok := charClass(p[s:end-1], tch, fold)
					if !ok {
						return wmAbortAll
					}
					matched = matched || in
					pi = end
					pch = 0
				default:
					matched = matched || tch == pch
				}
				prev = pch
				pi++
				if pch = at(p, pi); pch == ']' {
					break
				}
			}
			if matched == negated || pathname && tch == '/' {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// charClass reports whether c is in the named POSIX class of "[[:name:]]",
// in the C locale; ok is false for a name no class has.
func charClass(name string, c byte, fold bool) (in, ok bool) {
	lower := 'a' <= c && c <= 'z'
	upper := 'A' <= c && c <= 'Z'
	digit := '0' <= c && c <= '9'
	space := c == ' ' || '\t' <= c && c <= '\r'
	print := ' ' <= c && c < 0x7f
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return print && c != ' ', true
	case "lower":
		return lower, true
	case "print":
		return print, true
	case "punct":
		return print && c != ' ' && !lower && !upper && !digit, true
	case "space":
		return space, true
	case "upper":
		return upper || fold && lower, true
	case "xdigit":
		return digit || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F', true
	}
	return false, false
}
