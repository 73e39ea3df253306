package state

import (
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
	}
	for in, want := range cases {
		got, err := ParseTime(in, now)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%s: got %s want %s", in, got, want)
	}
	for _, bad := range []string{"", "yesterday", "2w ago", "-1h ago", "h ago", "2026-11-22"} {
		_, err := ParseTime(bad, now)
		assert.Error(t, err, bad)
	}
}
