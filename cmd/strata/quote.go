package main

import (
	"strconv"
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
