package odb

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// CommitFault is what git fsck --strict says of a commit object, as its
// checks of a commit say it (fsck.c: verify_headers, fsck_commit,
// fsck_ident in git 2.39), or "" when it has nothing to say:
// a commit it faults is one git fsck fails on and every remote that checks
// what it receives (receive.fsckObjects, as the big hosts set it) refuses,
// so a history holding it can never be pushed there again. The message is
// git's: its message id, then its text.
func CommitFault(raw []byte) string {
	if f := headerFault(raw); f != "" {
		return f
	}
	b := raw
	line := func(prefix string) ([]byte, bool) {
		if !bytes.HasPrefix(b, []byte(prefix)) {
			return nil, false
		}
		rest := b[len(prefix):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
			b = nil
		} else {
			b = rest[nl+1:]
		}
		return rest[:nl], true
	}
	v, ok := line("tree ")
	if !ok {
		return "missingTree: invalid format - expected 'tree' line"
	}
	if _, ok := parseHash(v); !ok {
		return "badTreeSha1: invalid 'tree' line format - bad sha1"
	}
	for {
		v, ok := line("parent ")
		if !ok {
			break
		}
		if _, ok := parseHash(v); !ok {
			return "badParentSha1: invalid 'parent' line format - bad sha1"
		}
	}
	authors := 0
	for {
		v, ok := line("author ")
		if !ok {
			break
		}
		authors++
		if f := identFault(v); f != "" {
			return f
		}
	}
	switch {
	case authors == 0:
		return "missingAuthor: invalid format - expected 'author' line"
	case authors > 1:
		return "multipleAuthors: invalid format - multiple 'author' lines"
	}
	v, ok = line("committer ")
	if !ok {
		return "missingCommitter: invalid format - expected 'committer' line"
	}
	if f := identFault(v); f != "" {
		return f
	}
	// strata's own, stricter than git fsck, which reads nothing past the
	// committer line: a tree, parent, author or committer line there is
	// read by some of git (a pretty format takes the last committer) and
	// not by the rest, and no git or strata writes one (attack35c M1)
	for len(b) > 0 && b[0] != '\n' {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			nl = len(b)
		}
		key, _, _ := bytes.Cut(b[:nl], []byte{' '})
		switch string(key) {
		case "tree", "parent", "author", "committer":
			return "repeatedHeader: a " + string(key) + " line after the committer line (strata refuses it; git reads such a commit two ways)"
		}
		b = b[min(nl+1, len(b)):]
	}
	// a warning of git fsck's, which its strict form (a fetch's or a
	// push's check) takes as an error
	if bytes.IndexByte(raw, 0) >= 0 {
		return "nulInCommit: NUL byte in the commit object body"
	}
	return ""
}

// headerFault is git's verify_headers: no NUL before the blank line that
// ends the header, and a header that ends.
func headerFault(raw []byte) string {
	for i, c := range raw {
		switch c {
		case 0:
			return fmt.Sprintf("nulInHeader: unterminated header: NUL at offset %d", i)
		case '\n':
			if i+1 < len(raw) && raw[i+1] == '\n' {
				return ""
			}
		}
	}
	if len(raw) > 0 && raw[len(raw)-1] == '\n' {
		return ""
	}
	return "unterminatedHeader: unterminated header"
}

// identFault is git's fsck_ident of an author or committer line's value
// (NAME <EMAIL> SECONDS ZONE).
func identFault(v []byte) string {
	const pre = "invalid author/committer line - "
	if len(v) > 0 && v[0] == '<' {
		return "missingNameBeforeEmail: " + pre + "missing space before email"
	}
	p := bytes.IndexAny(v, "<>")
	switch {
	case p >= 0 && v[p] == '>':
		return "badName: " + pre + "bad name"
	case p < 0:
		return "missingEmail: " + pre + "missing email"
	case v[p-1] != ' ':
		return "missingSpaceBeforeEmail: " + pre + "missing space before email"
	}
	v = v[p+1:]
	p = bytes.IndexAny(v, "<>")
	if p < 0 || v[p] != '>' {
		return "badEmail: " + pre + "bad email"
	}
	v = v[p+1:]
	if len(v) == 0 || v[0] != ' ' {
		return "missingSpaceBeforeDate: " + pre + "missing space before date"
	}
	v = v[1:]
	if len(v) > 0 && v[0] == '0' && (len(v) == 1 || v[1] != ' ') {
		return "zeroPaddedDate: " + pre + "zero-padded date"
	}
	// the seconds as git reads them, with strtoumax: white space, then a
	// sign, then digits; a value past what a signed 64-bit time holds
	// (or a negative one, which strtoumax wraps) overflows
	i := 0
	for i < len(v) && (v[i] == ' ' || (v[i] >= '\t' && v[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	n := i
	for n < len(v) && v[n] >= '0' && v[n] <= '9' {
		n++
	}
	if n > i {
		t, err := strconv.ParseUint(string(v[i:n]), 10, 64)
		if err != nil || t > math.MaxInt64 || (neg && t != 0) {
			return "badDateOverflow: " + pre + "date causes integer overflow"
		}
	} else {
		n = 0 // strtoumax read nothing: its end is where it began
	}
	if n == 0 || n == len(v) || v[n] != ' ' {
		return "badDate: " + pre + "bad date"
	}
	z := v[n+1:]
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') || !digits(z[1:]) {
		return "badTimezone: " + pre + "bad time zone"
	}
	return ""
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
