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
// It is the one form strata has written the trailer in, since the trailer
// exists, always in UTC ("Z").
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func writeTime(b *strings.Builder, t time.Time) {
	b.WriteString(trailerTime + ": " + t.UTC().Format(timeLayout) + "\n")
}

// timeValue returns the value of a message's Strata-Time line (the last
// one, which ends the trailers of every commit strata writes), and whether
// it has one: a commit written before the trailer existed has none.
func timeValue(msg string) (string, bool) {
	msg = strings.TrimRight(msg, "\n")
	i := strings.LastIndex(msg, "\n"+trailerTime+": ")
	if i < 0 {
		return "", false
	}
	v, _, _ := strings.Cut(msg[i+len(trailerTime)+3:], "\n")
	return v, true
}

// minTime is the earliest Strata-Time strata can have written: git's commit
// times count seconds from 1970, and strata's commit time is its trailer's
// second.
var minTime = time.Unix(0, 0).UTC()

// parseTime reads a Strata-Time value in the form strata writes, and only
// that: timeLayout in UTC, written back to the same text, not before
// minTime (a time past 9999 does not fit the form). ok is false for
// anything else, such as "-1" or "2099-01-01T00:00:00Z".
func parseTime(v string) (t time.Time, ok bool) {
	t, err := time.Parse(timeLayout, v)
	if err != nil || t.UTC().Format(timeLayout) != v || t.Before(minTime) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// badTime returns why a message's Strata-Time line is not one strata
// writes, or "" when it is (or the message has none).
func badTime(msg string) string {
	v, ok := timeValue(msg)
	if !ok {
		return ""
	}
	if _, ok := parseTime(v); !ok {
		if len(v) > 64 {
			v = v[:64] + "..."
		}
		return "its Strata-Time " + strconv.Quote(v) + " is not a time in strata's form (YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ, from 1970 on)"
	}
	return ""
}

// stampTime is the time a commit's writer gives for it: its Strata-Time
// trailer, else (a commit written before the trailer existed) its commit
// time. A fetched commit's trailer was checked when it came (badTime); one
// a machine took before that check existed and that does not parse counts
// as its commit time. What a decision makes of the time is bounded
// (stamps, conflict.Bound).
func stampTime(ci commitInfo) time.Time {
	if v, ok := timeValue(ci.message); ok {
		if t, ok := parseTime(v); ok {
			return t
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
// quotes it, and also whenever state.ShownPath would quote it (a format
// character such as a zero width or a bidi control, white space at either
// end of an element), so a refusal names a remote's path as the sync report
// does (kept local "\u200c", wrote ".claude/ lead.json"), never with the raw
// character, and a name with leading or trailing white space shows where it
// begins and ends.
func shownPath(p string) string {
	if needsQuote(p) || state.ShownPath(p) != p {
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
