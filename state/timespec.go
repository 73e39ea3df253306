package state

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxUnix is the last second "@N" takes (the year 9999's end): beyond it
// time.Time's arithmetic is not exact.
const maxUnix = 253402300799

// ParseTime reads a point in time as the CLI accepts it, the forms people
// give git's --since/--until:
//
//   - RFC 3339: "2026-11-22T10:00:00Z", "2026-11-22T10:00:00+01:00";
//   - a local date and time: "2026-11-22 10:00", "2026-11-22T10:00:05";
//   - a date alone: "2026-11-22", at the current time of day (as git does);
//   - relative to now: "2h ago", "30s ago", "2 hours ago", "2.hours.ago",
//     "3 days ago", "1 week ago" (units s, m, h, d, w and second, minute,
//     hour, day, week, month = 30 days, year = 365 days, singular or
//     plural);
//   - "now", "yesterday" (24 hours ago), "last week", "noon" (12:00 today,
//     or yesterday before noon) and "midnight" (00:00 today).
//
// Local times are in now's location.
//
// "@1795652428" is that many seconds since the Unix epoch, as git reads it.
func ParseTime(s string, now time.Time) (time.Time, error) {
	t, err := parseTime(s, now)
	if err == nil && t.IsZero() {
		// The zero time means "no time given" to every caller (the latest
		// version); year 1 is a nanosecond later, which has the same
		// history: nothing recorded. Any form can name it ("0001-01-01
		// 00:00" in UTC too).
		t = t.Add(time.Nanosecond)
	}
	return t, err
}

func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if digits, ok := strings.CutPrefix(s, "@"); ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
		if sec, err := strconv.ParseInt(digits, 10, 64); err == nil && sec <= maxUnix {
			return time.Unix(sec, 0).In(now.Location()), nil // git's @<seconds since the epoch>
		}
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	if d, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		h, m, sec := now.Clock()
		return time.Date(d.Year(), d.Month(), d.Day(), h, m, sec, now.Nanosecond(), now.Location()), nil
	}
	low := strings.ToLower(strings.ReplaceAll(s, ".", " "))
	switch strings.Join(strings.Fields(low), " ") {
	case "now":
		return now, nil
	case "yesterday":
		return now.Add(-24 * time.Hour), nil
	case "last week":
		return now.Add(-7 * 24 * time.Hour), nil
	case "midnight":
		y, mo, d := now.Date()
		return time.Date(y, mo, d, 0, 0, 0, 0, now.Location()), nil
	case "noon":
		if now.Hour() < 12 {
			now = now.Add(-24 * time.Hour)
		}
		y, mo, d := now.Date()
		return time.Date(y, mo, d, 12, 0, 0, 0, now.Location()), nil
	}
	if rest, ok := strings.CutSuffix(low, "ago"); ok {
		secs, ok := relative(strings.TrimSpace(rest))
		if ok && secs > maxAgo {
			return time.Time{}, fmt.Errorf("invalid time %q: further back than %d years (%d seconds)", quotedTime(s), maxAgo/yearSeconds, int64(maxAgo))
		}
		if ok {
			// in seconds, not a Duration: "300 years ago" is past what one
			// holds (~292 years)
			t := time.Unix(now.Unix()-secs, int64(now.Nanosecond())).In(now.Location())
			if t.IsZero() {
				t = t.Add(time.Nanosecond) // the zero time means "no time given"
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid time %q: want RFC 3339, YYYY-MM-DD[ HH:MM[:SS]], @SECONDS, N UNIT ago (2h ago, 2 hours ago; UNIT s, m, h, d, w, month or year), now, yesterday, last week, noon or midnight", quotedTime(s))
}

// quotedTime is s cut to what an error quotes: one line, not a hostile
// caller's megabytes back (an MCP argument).
func quotedTime(s string) string {
	if len(s) > maxQuotedTime {
		s = strings.ToValidUTF8(s[:maxQuotedTime], "") + "…"
	}
	return s
}

// maxQuotedTime is how much of a time that does not parse its error quotes.
const maxQuotedTime = 80

// units maps the unit words of a relative time to their length.
var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "second": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute,
	"h": time.Hour, "hour": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour,
	"month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour,
}

// yearSeconds is a year's length as "years ago" reads it (365 days).
const yearSeconds = 365 * 24 * 60 * 60

// maxAgo bounds a relative time, the same span whatever its unit: 999 999 999
// years, in seconds (3.2e16: far inside an int64, and past any history).
// attack24: the bound was on the count's digits, 9 of them, so
// "9223372036s ago" (292 years) was refused while "300 years ago" was not.
const maxAgo = 999_999_999 * yearSeconds

// relative reads "2h", "2 h", "2 hours", "1 week": a count of one unit,
// returned in seconds; a span past maxAgo (ok, but over it) is
// maxAgo+1, never a wrapped product.
func relative(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	word := strings.TrimSpace(s[i:])
	unit, ok := units[word]
	if !ok && len(word) > 2 {
		unit, ok = units[strings.TrimSuffix(word, "s")]
	}
	if !ok {
		return 0, false
	}
	per := int64(unit / time.Second)
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > maxAgo/per { // past an int64 (ErrRange) is past maxAgo too
		return maxAgo + 1, true
	}
	return n * per, true
}
