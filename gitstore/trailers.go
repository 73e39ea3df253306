package gitstore

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// The trailer keys of a recorded commit, one block per recorded path, in
// this order. A block starts at its Strata-Path line.
const (
	trailerPath   = "Strata-Path"
	trailerAction = "Strata-Action"
	trailerClass  = "Strata-Class"
	trailerSource = "Strata-Source"
	trailerSchema = "Strata-Schema"
	// Provenance, when a Claude Code PostToolUse hook saw the version.
	trailerSession = "Strata-Session"
	trailerToolUse = "Strata-Tool-Use"
	// The user's checked-out commit, when it holds the recorded version.
	trailerHead = "Strata-Head"
	// trailerTime ends the trailers of every commit strata writes: the
	// writer's time, to the nanosecond (a commit time has whole seconds).
	trailerTime = "Strata-Time"
)

// timeLayout is RFC 3339 with nine fraction digits, so times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func writeTime(b *strings.Builder, t time.Time) {
	b.WriteString(trailerTime + ": " + t.UTC().Format(timeLayout) + "\n")
}

// stampTime is when a commit's writer recorded it: its Strata-Time trailer,
// else (a commit written before the trailer existed) its commit time.
func stampTime(ci commitInfo) time.Time {
	msg := strings.TrimRight(ci.message, "\n")
	if i := strings.LastIndex(msg, "\n"+trailerTime+": "); i >= 0 {
		v, _, _ := strings.Cut(msg[i+len(trailerTime)+3:], "\n")
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UTC()
		}
	}
	return time.Unix(ci.time, 0).UTC()
}

// quotePath returns p as written in messages and trailers: as is, or quoted
// with Go/C escapes (as git quotes odd paths) when it holds a control
// character or invalid UTF-8, starts with a double quote, or has leading or
// trailing white space that a trailer would lose.
func quotePath(p string) string {
	if needsQuote(p) {
		return strconv.Quote(p)
	}
	return p
}

// shownPath returns p as an error line shows it: quoted as quotePath
// quotes it, and also whenever state.TermSafe would quote it (a format
// character such as a zero width or a bidi control), so a refusal names a
// remote's path as the sync report does (kept local "\u200c"), never with
// the raw character, while a name with leading or trailing white space
// still shows where it ends.
func shownPath(p string) string {
	if needsQuote(p) || state.TermSafe(p) != p {
		return strconv.Quote(p)
	}
	return p
}

func needsQuote(p string) bool {
	if p == "" || p[0] == '"' || p != strings.TrimSpace(p) || !utf8.ValidString(p) {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			return true
		}
	}
	return false
}

func unquotePath(v string) string {
	if strings.HasPrefix(v, `"`) {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	return v
}

// oneLine keeps a trailer value on one line.
func oneLine(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		return strconv.Quote(v)
	}
	return v
}

func writeTrailers(b *strings.Builder, ps []pending) {
	for _, p := range ps {
		b.WriteString(trailerPath + ": " + quotePath(p.ch.Path) + "\n")
		b.WriteString(trailerAction + ": " + string(p.action) + "\n")
		b.WriteString(trailerClass + ": " + oneLine(string(p.ch.Class)) + "\n")
		b.WriteString(trailerSource + ": " + oneLine(string(p.ch.Source)) + "\n")
		b.WriteString(trailerSchema + ": " + oneLine(p.ch.Schema) + "\n")
		if p.ch.Session != "" {
			b.WriteString(trailerSession + ": " + oneLine(p.ch.Session) + "\n")
		}
		if p.ch.ToolUse != "" {
			b.WriteString(trailerToolUse + ": " + oneLine(p.ch.ToolUse) + "\n")
		}
		if p.ch.AtHead != "" {
			b.WriteString(trailerHead + ": " + oneLine(p.ch.AtHead) + "\n")
		}
	}
}

// parseTrailers reads the strata trailer blocks from the last paragraph of
// a commit message. Commit and Time are left for the caller to fill in.
// Lines that are not strata trailers are ignored, so a message written by a
// later version with more trailers still parses.
func parseTrailers(msg string) []state.Entry {
	var out []state.Entry
	for _, line := range strings.Split(trailerParagraph(msg), "\n") {
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if key == trailerPath {
			out = append(out, state.Entry{Path: unquotePath(val)})
			continue
		}
		if len(out) == 0 {
			continue
		}
		e := &out[len(out)-1]
		switch key {
		case trailerAction:
			e.Action = state.Action(val)
		case trailerClass:
			e.Class = state.Class(unquotePath(val))
		case trailerSource:
			e.Source = state.Source(unquotePath(val))
		case trailerSchema:
			e.Schema = unquotePath(val)
		case trailerSession:
			e.Session = state.HookID(val)
		case trailerToolUse:
			e.ToolUse = state.HookID(val)
		case trailerHead:
			if plumbing.IsHash(val) {
				e.AtHead = val
			}
		}
	}
	return out
}

// trailerParagraph returns the last paragraph of a commit message, where
// its trailers are.
func trailerParagraph(msg string) string {
	msg = strings.TrimRight(msg, "\n")
	if i := strings.LastIndex(msg, "\n\n"); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// blockWithoutAction returns the path of the first trailer block of msg
// that has no Strata-Action line, and the path of the block after it, ""
// when it is the last: a Strata-Path line opens a block, so a second one
// before the first's action names two paths in one block. It returns
// ok false when every block has its action.
func blockWithoutAction(msg string) (path, next string, ok bool) {
	open, acted := "", true
	for _, line := range strings.Split(trailerParagraph(msg), "\n") {
		key, val, found := strings.Cut(line, ": ")
		switch {
		case !found:
		case key == trailerPath:
			if !acted {
				return open, unquotePath(val), true
			}
			open, acted = unquotePath(val), false
		case key == trailerAction:
			acted = true
		}
	}
	if !acted {
		return open, "", true
	}
	return "", "", false
}
