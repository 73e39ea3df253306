package state

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TermSafe returns s as is when it holds only printable text, and quoted
// in Go's (and git's) C style otherwise: a control character (C0, DEL or
// C1), invalid UTF-8, U+FFFD or a format character (bidi controls, zero
// widths). Text recorded elsewhere — a path, a trailer or a state file that
// came from a remote — can then never send an escape sequence to the
// user's terminal nor break a line. It is the one rule of quoting for text
// output.
func TermSafe(s string) string {
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

// ShellWord returns s as one word a POSIX shell reads back as s: as it is
// when it holds only letters, digits and "._/-~+@%:,=" and does not start
// with "~" (tilde expansion), else single-quoted
// (a quote inside as the four characters quote, backslash, quote, quote),
// so a command strata prints for the user to
// copy (strata restore PATH --rev REV) runs nothing else whatever a
// remote named the path.
func ShellWord(s string) string {
	safe := s != "" && s[0] != '~' // a leading ~ is the shell's: ~user expands to a home
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-~+@%:,=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return TermSafe("'" + strings.ReplaceAll(s, "'", `'\''`) + "'")
}

// TermText returns a multi-line report made from recorded text, each line
// quoted after its indent when a terminal would act on it (TermSafe): what
// the command line prints and what the MCP server gives as text are the
// same.
func TermText(text string) string {
	if TermSafe(strings.ReplaceAll(text, "\n", "")) == strings.ReplaceAll(text, "\n", "") {
		return text // the usual case: nothing to quote
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		rest := strings.TrimLeft(l, " ")
		b.WriteString(l[:len(l)-len(rest)])
		b.WriteString(TermSafe(rest))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TermDiff returns a unified diff made from recorded text with each line a
// terminal would act on quoted after its one-character mark (' ', '+' or
// '-'), as git quotes a name, so the diff keeps its shape: `+"- \x1b[2J"`. A
// carriage return that ends a line (a CRLF file) is left as it is: it
// moves the cursor to where the line ends anyway. A header line (---, +++)
// whose name is not printable is quoted after its mark.
func TermDiff(text string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		mark := ""
		switch {
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
			mark = l[:4]
		case l != "" && strings.ContainsRune(" +-", rune(l[0])):
			mark = l[:1]
		}
		body := l[len(mark):]
		if TermSafe(strings.TrimSuffix(body, "\r")) != strings.TrimSuffix(body, "\r") {
			body = TermSafe(body)
		}
		b.WriteString(mark)
		b.WriteString(body)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
