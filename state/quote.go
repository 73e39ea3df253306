package state

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
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
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// ShownPath returns a path as a report or a refusal line names it: quoted
// as TermSafe quotes it wherever TermSafe would, and also when the path
// starts with a double quote or one of its elements starts or ends with
// white space (".claude/ lead.json"), so where each name begins and ends
// shows. Every other path is printed as it is.
func ShownPath(p string) string {
	if p != "" && p[0] == '"' || !printable(p) {
		return strconv.Quote(p)
	}
	for _, el := range strings.Split(p, "/") {
		if el != strings.TrimSpace(el) {
			return strconv.Quote(p)
		}
	}
	return p
}

// ShownPaths returns paths as a line lists them: each as ShownPath shows
// it, joined by sep.
func ShownPaths(paths []string, sep string) string {
	shown := make([]string, len(paths))
	for i, p := range paths {
		shown[i] = ShownPath(p)
	}
	return strings.Join(shown, sep)
}

// printable reports whether s is text TermSafe leaves as it is.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !printableRune(r) {
			return false
		}
	}
	return true
}

// PrintableRune reports whether r is a character TermSafe leaves as it is
// (printableRune), for a writer of another format that escapes the others
// its own way: the resolution YAML decide writes.
func PrintableRune(r rune) bool { return printableRune(r) }

// printableRune reports whether r is a character TermSafe leaves as it is:
// not a control character (C0, DEL, C1), not U+FFFD (what invalid UTF-8
// decodes to) and not a format character (bidi controls, zero widths,
// U+FEFF).
func printableRune(r rune) bool {
	return !unicode.IsControl(r) && r != utf8.RuneError && !unicode.Is(unicode.Cf, r)
}

// EscapeText returns s with each character TermSafe would quote written as
// the escape TermSafe writes for it, as plain text, and every other
// character as it is: an ESC becomes the four characters \x1b, a BEL \a,
// U+009B \u009b, U+202E \u202e, a byte that is not UTF-8 \xHH and U+FFFD
// \ufffd; "café" and "東京" stay as they are. It is for text strata writes
// into a file a person reads with cat or git diff and an agent reads as
// context (the MEMORY.md line of a workflow state): nothing in it acts on
// a terminal, and what was there can still be read. A backslash is left as it is, so the result is for
// reading, not for decoding back.
func EscapeText(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case printableRune(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\a', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// MaxQuoted is how many characters of one value from a state file strata
// quotes where an agent reads it as context (a MEMORY.md protocol line, the
// resume report, an L3 observation strata writes): an agent may paste a
// design document into a workflow state's context, and a 200 000-character
// value would become a 200 KB line.
const MaxQuoted = 200

// Cut is s cut to at most n characters counted as EscapeText writes them
// (an escape is never split), with "…" after a cut; cut reports whether it
// cut. s comes back as it is when it fits.
func Cut(s string, n int) (out string, cut bool) {
	if len(s) <= n && EscapeText(s) == s {
		return s, false
	}
	w := 0
	for i, r := range s {
		c := utf8.RuneCountInString(EscapeText(string(r))) // 1, or the escape's length
		if w+c > n {
			return s[:i] + "…", true
		}
		w += c
	}
	return s, false
}

// JSONSafe returns data, JSON text as encoding/json writes it, with each
// character TermSafe would quote that encoding/json leaves as it is (DEL,
// the C1 controls U+0080–U+009F, format characters such as the bidi
// controls U+202A–U+202E and U+2066–U+2069, zero widths and U+FEFF, and
// U+FFFD) written as a \uXXXX escape (a surrogate pair above U+FFFF), as
// encoding/json already writes C0 controls. Such a character can stand
// only inside a string of valid JSON, so the result is valid JSON that
// decodes to the same values, and a terminal showing it acts on nothing.
// It is the one rule for every JSON document strata prints. data is
// returned as it is when it holds nothing to escape.
func JSONSafe(data []byte) []byte {
	const hex = "0123456789abcdef"
	var out []byte // nil until the first escape
	done := 0      // data[:done] is in out
	for i := 0; i < len(data); {
		r, n := rune(data[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(data[i:])
		}
		if r < utf8.RuneSelf && r != 0x7f || r != utf8.RuneError && printableRune(r) {
			i += n // (ASCII below 0x20 is JSON's white space here: in a string encoding/json escaped it)
			continue
		}
		out = append(out, data[done:i]...)
		units := []rune{r}
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			units = []rune{r1, r2}
		}
		for _, u := range units {
			out = append(out, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
		}
		i += n
		done = i
	}
	if out == nil {
		return data
	}
	return append(out, data[done:]...)
}

// SingleQuoted returns s in single quotes, a quote inside as the four
// characters quote, backslash, quote, quote: the one form every POSIX
// shell, dash included, reads back as s (ShellWord's for printable text,
// and the hook scripts' that /bin/sh runs).
func SingleQuoted(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellPath is ShellWord for a path strata prints in a command (strata
// restore PATH), where a path of the home directory's files starts with
// "~/": that "~/" is left bare, for the shell to expand (strata reads
// "~/" itself too), and the rest is one ShellWord, so the word still runs
// nothing else: ~/'dir/$(x) y.md'.
func ShellPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && rest != "" {
		return "~/" + ShellWord(rest)
	}
	return ShellWord(p)
}

// ShellWord returns s as one word a shell reads back as s, on one line of
// printable text, for a command strata prints for a person to paste or an
// agent to run (strata restore PATH --rev REV), so it runs nothing else
// whatever a remote named the path:
//   - as it is when it holds only letters, digits and "._/-~+@%:,=" and does
//     not start with "~" (tilde expansion);
//   - else single-quoted, a quote inside as the four characters quote,
//     backslash, quote, quote, which every POSIX shell reads;
//   - else, when s holds a character TermSafe would quote (a newline, an
//     escape, a format character, invalid UTF-8), in the $'...' form bash,
//     zsh, ksh and busybox sh read (POSIX.1-2024 made it sh's too), each
//     such byte as a three-digit octal escape (\n, \t and \r by name), a
//     quote as \' and a backslash as \\: $'a\nb: c', $'\033[2J'. Only this
//     form keeps both the bytes and the line; an older /bin/sh (dash) does
//     not read it, so nothing written into a script /bin/sh runs is quoted
//     here. Octal, not \x: after \x a shell may take more than two hex
//     digits.
func ShellWord(s string) string {
	safe := s != "" && s[0] != '~' // a leading ~ is the shell's: ~user expands to a home
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-~+@%:,=", r)) {
			safe = false
			break
		}
	}
	switch {
	case safe:
		return s
	case printable(s):
		return SingleQuoted(s)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'', r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case printable(s[i : i+n]):
			b.WriteString(s[i : i+n])
		default:
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\%03o`, c)
			}
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// TermText returns a multi-line report made from recorded text, each line
// quoted after its indent when a terminal would act on it (TermSafe): what
// the command line prints and what the MCP server gives as text are the
// same.
func TermText(text string) string {
	return quoteLines(text, func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }, false)
}

// TermDiff returns a unified diff made from recorded text with each line a
// terminal would act on quoted after its one-character mark (' ', '+' or
// '-'), as git quotes a name, so the diff keeps its shape: `+"- \x1b[2J"`. A
// carriage return that ends a line (a CRLF file) is left as it is: it
// moves the cursor to where the line ends anyway. A header line (---, +++)
// whose name is not printable is quoted after its mark.
func TermDiff(text string) string {
	return quoteLines(text, func(l string) int {
		switch {
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
			return 4
		case l != "" && strings.ContainsRune(" +-", rune(l[0])):
			return 1
		}
		return 0
	}, true)
}

// quoteLines quotes each line of text whose body a terminal would act on,
// leaving the head the line starts with (its first head(line) bytes) and
// its "\n" as they are; with crEnds, a "\r" that ends the body alone makes
// no line quoted.
func quoteLines(text string, head func(line string) int, crEnds bool) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, l := range strings.SplitAfter(text, "\n") {
		line := strings.TrimSuffix(l, "\n")
		n := head(line)
		body, check := line[n:], line[n:]
		if crEnds {
			check = strings.TrimSuffix(body, "\r")
		}
		b.WriteString(line[:n])
		if printable(check) {
			b.WriteString(body)
		} else {
			b.WriteString(strconv.Quote(body))
		}
		b.WriteString(l[len(line):])
	}
	return b.String()
}
