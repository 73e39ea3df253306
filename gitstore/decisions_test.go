package gitstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A decided line's winner and loser are commit ids: anyone who can push
// writes the message, and a forged "id" holding escapes reached the
// terminal through strata timeline (attack36b F4). A loser that is not an
// id drops the line; a winner that is not one is left out.
func TestDecisionsOfIDs(t *testing.T) {
	const (
		a = "0123456789abcdef0123456789abcdef01234567"
		b = "89abcdef0123456789abcdef0123456789abcdef"
	)
	line := func(w, l string) string {
		return "sync with origin\n\ndecided .claude/notes.json: " + w + " (2026-01-01T00:00:00Z) over " + l + " (2026-01-01T00:00:01Z)\n"
	}
	for _, tc := range []struct {
		name, winner, loser string
		want                []Decision
	}{
		{"ids", a, b, []Decision{{Path: ".claude/notes.json", Winner: a, Loser: b}}},
		{"escapes on both sides", "\x1b]0;PWNED\a", "\x1b[2J\x1b[3J", nil},
		{"a forged winner", "\x1b]0;PWNED\a", b, []Decision{{Path: ".claude/notes.json", Loser: b}}},
		{"a forged loser", a, "\x1b[2J", nil},
		{"a short loser", a, b[:10], nil},
		{"a ref name for a loser", a, "refs/heads/main", nil},
		{"a winner one letter short", a[:39], b, []Decision{{Path: ".claude/notes.json", Loser: b}}},
		{"a winner not hex", strings.Repeat("g", 40), b, []Decision{{Path: ".claude/notes.json", Loser: b}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, decisionsOf(line(tc.winner, tc.loser)))
		})
	}
}

// Decisions names the merge commit itself as the winner of a decided line
// whose winner is not a commit id, and passes over one whose loser is not.
func TestDecisionsForgedMerge(t *testing.T) {
	dir := t.TempDir()
	initRepo(t, dir, true)
	first := runGit(t, dir, "rev-parse", "HEAD~1")
	second := runGit(t, dir, "rev-parse", "HEAD")
	tree := runGit(t, dir, "rev-parse", "HEAD^{tree}")
	msg := "sync with origin\n\n" +
		"decided a.json: \x1b]0;PWNED\a (t) over " + first + " (t)\n" +
		"decided b.json: " + second + " (t) over \x1b[2J\x1b[3J (t)\n" +
		"decided c.json: " + second + " (t) over " + first + " (t)\n"
	merge, err := gitOut(dir, []byte(msg), "commit-tree", tree, "-p", first, "-p", second)
	require.NoError(t, err)
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	ds, err := s.Decisions(merge)
	require.NoError(t, err)
	require.Equal(t, []Decision{
		{Path: "a.json", Winner: merge, Loser: first},
		{Path: "c.json", Winner: second, Loser: first},
	}, ds)
}
