package state

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProblemError(t *testing.T) {
	p := Problem{Path: ".claude/workflow-state.json", Line: 3, Col: 11, Pointer: "/type", Message: `value must be one of "APEX"`}
	assert.Equal(t, `.claude/workflow-state.json:3:11: /type: value must be one of "APEX"`, p.Error())
	p = Problem{Path: "a.json", Message: "file is empty"}
	assert.Equal(t, "a.json: /: file is empty", p.Error())
	p = Problem{Path: "MEMORY.md", Message: "201 lines", Warning: true}
	assert.Equal(t, "MEMORY.md: /: warning: 201 lines", p.Error())
	assert.False(t, Problems{p}.Invalid())
	assert.True(t, Problems{p, {Path: "x"}}.Invalid())
	// a document nested 1 000 deep: the line stays readable, --json has it all
	// (attack18-hooks F9: pointers of 2 000-9 000 characters)
	deep := strings.Repeat("/0", 1000)
	p = Problem{Path: "a.json", Line: 1, Col: 1001, Pointer: deep, Message: "too deep"}
	assert.Equal(t, "a.json:1:1001: /0/0/0/0/0/0/…(991 more)…/0/0/0: too deep", p.Error())
	j, _ := p.MarshalJSON()
	assert.Contains(t, string(j), deep)
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Time{
		"2026-11-22T10:00:00Z": time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		"30s ago":              now.Add(-30 * time.Second),
		"90m ago":              now.Add(-90 * time.Minute),
		"2h ago":               now.Add(-2 * time.Hour),
		"3d ago":               now.Add(-72 * time.Hour),
		"2hago":                now.Add(-2 * time.Hour),
		"2 hours ago":          now.Add(-2 * time.Hour),
		"2.hours.ago":          now.Add(-2 * time.Hour),
		"1 hour ago":           now.Add(-time.Hour),
		"2w ago":               now.Add(-14 * 24 * time.Hour),
		"1 week ago":           now.Add(-7 * 24 * time.Hour),
		"3 days ago":           now.Add(-72 * time.Hour),
		"yesterday":            now.Add(-24 * time.Hour),
		"last week":            now.Add(-7 * 24 * time.Hour),
		"now":                  now,
		"noon":                 time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		"midnight":             time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		"2026-11-20":           time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC), // a date keeps the time of day, as git does
		"2026-11-20 10:30":     time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC),
		"2026-11-20T10:30:05":  time.Date(2026, 11, 20, 10, 30, 5, 0, time.UTC),
		"@1795652428":          time.Unix(1795652428, 0), // git's seconds since the epoch
		"@0":                   time.Unix(0, 0),
	}
	for in, want := range cases {
		got, err := ParseTime(in, now)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%s: got %s want %s", in, got, want)
	}
	for _, bad := range []string{"", "tomorrow", "2 fortnights ago", "-1h ago", "h ago", "2026-13-22", "9999999999999999h ago", "ago", "@", "@-5", "@1.5", "@12x", "@99999999999999999999"} {
		_, err := ParseTime(bad, now)
		assert.Error(t, err, bad)
	}
	// Past what a Duration holds (~292 years) the time is still the one
	// asked for, never a wrap into the future nor a clamp.
	for far, want := range map[string]time.Time{
		"300 years ago":       now.AddDate(0, 0, -300*365),
		"20000w ago":          now.AddDate(0, 0, -20000*7),
		"999999999d ago":      now.AddDate(0, 0, -999999999),
		"999999999 years ago": now.AddDate(0, 0, -999999999*365),
		"9223372036s ago":     now.Add(-9223372036 * time.Second), // attack24: refused while "300 years ago" was not
		"9999999999h ago":     now.AddDate(0, 0, -9999999999/24).Add(-15 * time.Hour),
	} {
		got, err := ParseTime(far, now)
		require.NoError(t, err, far)
		assert.True(t, got.Equal(want), "%s: got %s, want %s", far, got, want)
	}
	// Every unit has the same bound, a span of 999 999 999 years: the
	// last count under it is taken, the next refused, saying so (attack24).
	for unit, per := range map[string]int64{"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, " months": 30 * 86400, " years": 365 * 86400} {
		last := maxAgo / per
		got, err := ParseTime(fmt.Sprintf("%d%s ago", last, unit), now)
		require.NoError(t, err, unit)
		assert.Equal(t, now.Unix()-last*per, got.Unix(), unit)
		for _, over := range []string{fmt.Sprint(last + 1), "99999999999999999999999"} {
			_, err = ParseTime(over+unit+" ago", now)
			require.Error(t, err, unit)
			assert.Contains(t, err.Error(), "further back than 999999999 years (31535999968464000 seconds)", unit)
		}
	}
	// The zero time means "no time given": year 1 in any form is a
	// nanosecond later, never the latest version.
	for _, zero := range []string{"0001-01-01T00:00:00Z", "0001-01-01 00:00", "0001-01-01T00:00:00"} {
		got, err := ParseTime(zero, now)
		require.NoError(t, err, zero)
		assert.False(t, got.IsZero(), zero)
	}
	// Before noon, "noon" is yesterday's.
	morning := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	got, err := ParseTime("noon", morning)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), got)
}

// A time that does not parse is quoted in its error up to 80 bytes: an MCP
// client's 14 MB time string came back whole in the reply.
func TestParseTimeErrorIsShort(t *testing.T) {
	_, err := ParseTime(strings.Repeat("x", 1<<20), time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), `"`+strings.Repeat("x", 80)+`…"`) {
		t.Fatalf("got %.200v (%d bytes)", err, len(fmt.Sprint(err)))
	}
}

// TestProblemLineBounded: an error line keeps its pointer and message under
// about a kilobyte each, saying how long they were (attack19 verify-remote
// N6: duplicate keys of megabytes made a sync print 490 MB).
func TestProblemLineBounded(t *testing.T) {
	key := strings.Repeat("k", 5<<20)
	p := Problem{Path: "a.json", Line: 1, Col: 2, Pointer: "/" + key, Message: "duplicate key \"" + key + "\""}
	got := p.Error()
	if len(got) > 2*maxLine+200 {
		t.Fatalf("line of %d bytes", len(got))
	}
	if !strings.Contains(got, fmt.Sprintf("…(%d bytes in all)", len(key)+1)) || !strings.HasPrefix(got, "a.json:1:2: /kkk") {
		t.Fatalf("line %q", got[:200])
	}
}
