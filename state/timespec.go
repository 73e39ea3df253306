package state

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a point in time as the CLI accepts it: RFC 3339
// ("2026-11-22T10:00:00Z"), or relative to now with the units s, m, h, d
// ("30s ago", "90m ago", "2h ago", "3d ago"; the space is optional).
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.IsZero() {
			// The zero time means "no time given" to every caller (the
			// latest version); year 1 is a nanosecond later, which has the
			// same history: nothing recorded.
			t = t.Add(time.Nanosecond)
		}
		return t, nil
	}
	if rest, ok := strings.CutSuffix(s, "ago"); ok {
		rest = strings.TrimSpace(rest)
		if len(rest) >= 2 {
			unit := rest[len(rest)-1]
			n, err := strconv.ParseInt(strings.TrimSpace(rest[:len(rest)-1]), 10, 64)
			if err == nil && n >= 0 {
				var d time.Duration
				switch unit {
				case 's':
					d = time.Second
				case 'm':
					d = time.Minute
				case 'h':
					d = time.Hour
				case 'd':
					d = 24 * time.Hour
				}
				if d != 0 {
					return now.Add(-time.Duration(n) * d), nil
				}
			}
		}
	}
	return time.Time{}, fmt.Errorf("invalid time %q: want RFC 3339 or N{s,m,h,d} ago", s)
}
