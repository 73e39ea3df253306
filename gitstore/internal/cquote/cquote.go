// Package cquote reads the C-style quoting git writes a path in when it
// holds a quote, a backslash or a control character (quote_c_style), as
// in .gitattributes lines and objects/info/alternates entries.
package cquote

import "strings"

// Unquote reads a C-style quoted string at the start of s, as git's
// unquote_c_style: it returns the unquoted text and what follows the
// closing quote; ok is false when s does not start with a well-formed one.
func Unquote(s string) (text, rest string, ok bool) {
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), s[i+1:], true
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", "", false
		}
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"':
			b.WriteByte(c)
		case '0', '1', '2', '3':
			if i+2 >= len(s) || s[i+1] < '0' || s[i+1] > '7' || s[i+2] < '0' || s[i+2] > '7' {
				return "", "", false
			}
			b.WriteByte((c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
			i += 2
		default:
			return "", "", false
		}
	}
	return "", "", false
}
