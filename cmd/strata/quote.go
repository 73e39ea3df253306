package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// termSafe returns s as is when it holds only printable text, and quoted
// in Go's (and git's) C style otherwise, so that text recorded elsewhere — a
// path or trailer that came from a remote — can never send an escape
// sequence to the user's terminal.
func termSafe(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// shellWord returns s as one word a POSIX shell reads back as s: as it is
// when it holds only letters, digits and "._/-~+@%:,=", else single-quoted
// (a quote inside as the four characters quote, backslash, quote, quote),
// so a command strata prints for the user to
// copy (strata restore PATH --rev REV) runs nothing else whatever a
// remote named the path.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-~+@%:,=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return termSafe("'" + strings.ReplaceAll(s, "'", `'\''`) + "'")
}
