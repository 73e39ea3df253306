package markdown

import (
	"errors"
	"strings"
	"testing"
)

// A removal is checked as an insertion is: what the lines around the
// removed ones read as (a paragraph over "---", an HTML block ended by a
// blank line) must not change. RemoveItem keeps the blank line when that
// is enough, else refuses; TrimSection keeps such an item past the cap and
// removes the others. Every byte not removed is kept.
func TestRemoveKeepsReading(t *testing.T) {
	const setext = "# M\n\n## Workflow state\n\nRelease notes\n- Active 0\n---\n- Active 1\n- Active 2\n\n## Learnings\n- keep\n"
	const html = "# M\n\n## Workflow state\n<p>steps</p>\n\n- Active 0\n## Learnings\n- keep\n"
	const quote = "## Workflow state\n<div>\n\n- Active 0\n> user quote\n> - quoted item\n\n## Learnings\n- x\n"

	for _, tc := range []struct {
		name, src, text, want string
		refused               int // the line RemoveItem names, 0 when it removes
	}{
		{"paragraph over ---", setext, "Active 0", "", 6},
		{"blank line ending an HTML block", html, "Active 0", "# M\n\n## Workflow state\n<p>steps</p>\n\n## Learnings\n- keep\n", 0},
		{"CRLF, blank line kept", strings.ReplaceAll(html, "\n", "\r\n"), "Active 0",
			strings.ReplaceAll("# M\n\n## Workflow state\n<p>steps</p>\n\n## Learnings\n- keep\n", "\n", "\r\n"), 0},
		{"blank line goes when it may", "## Workflow state\ntext\n\n- Active 0\n## Learnings\n", "Active 0", "## Workflow state\ntext\n## Learnings\n", 0},
		{"no final newline", "## Workflow state\n<div>\n\n- Active 0\n## L", "Active 0", "## Workflow state\n<div>\n\n## L", 0},
		// attack35c L1: no heading or item changes, but the quote or the
		// fence would read as the HTML block's raw lines
		{"blank line ending an HTML block, a block quote after", quote, "Active 0", "## Workflow state\n<div>\n\n> user quote\n> - quoted item\n\n## Learnings\n- x\n", 0},
		{"blank line ending an HTML block, a code fence after", "## Workflow state\n<div>\n\n- Active 0\n```\ncode\n```\n\n## Learnings\n", "Active 0", "## Workflow state\n<div>\n\n```\ncode\n```\n\n## Learnings\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := RemoveItem([]byte(tc.src), "Workflow state", 0, tc.text)
			if tc.refused > 0 {
				var ue *UnsafeError
				if !errors.As(err, &ue) || !errors.Is(err, ErrRereads) || ue.Line != tc.refused || changed || string(out) != tc.src {
					t.Fatalf("RemoveItem = %q, %v, %v; want refused at line %d", out, changed, err, tc.refused)
				}
				return
			}
			if err != nil || !changed || string(out) != tc.want {
				t.Fatalf("RemoveItem = %q, %v, %v\nwant %q", out, changed, err, tc.want)
			}
		})
	}

	// the cap of 1: "Active 0" stays, "Active 1" goes
	out, n, kept, err := TrimSection([]byte(setext), "Workflow state", 2, 1, isActive)
	want := "# M\n\n## Workflow state\n\nRelease notes\n- Active 0\n---\n- Active 2\n\n## Learnings\n- keep\n"
	if err != nil || n != 1 || len(kept) != 1 || kept[0].Line != 6 || kept[0].Text != "Active 0" || string(out) != want {
		t.Fatalf("TrimSection = %q, %d, %+v, %v\nwant %q", out, n, kept, err, want)
	}
	// and when a block quote follows
	out, n, kept, err = TrimSection([]byte(quote), "Workflow state", 2, 0, isActive)
	want = "## Workflow state\n<div>\n\n> user quote\n> - quoted item\n\n## Learnings\n- x\n"
	if err != nil || n != 1 || len(kept) != 0 || string(out) != want {
		t.Fatalf("TrimSection = %q, %d, %+v, %v\nwant %q", out, n, kept, err, want)
	}
	// the HTML block's blank line stays when its list's last item goes
	out, n, kept, err = TrimSection([]byte(html), "Workflow state", 2, 0, isActive)
	want = "# M\n\n## Workflow state\n<p>steps</p>\n\n## Learnings\n- keep\n"
	if err != nil || n != 1 || len(kept) != 0 || string(out) != want {
		t.Fatalf("TrimSection = %q, %d, %+v, %v\nwant %q", out, n, kept, err, want)
	}
}
