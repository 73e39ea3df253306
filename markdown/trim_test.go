package markdown

import (
	"strings"
	"testing"
)

// trimOneByOne is TrimSection as it was: RemoveItem of the oldest surplus
// item, parsing the file again after each. TrimSection must give the same
// bytes from one parse.
func trimOneByOne(src []byte, heading string, level, keep int, match func(string) bool) ([]byte, int) {
	removed := 0
	for {
		d, err := Parse(src)
		if err != nil {
			return src, removed
		}
		s := d.Find(heading, level)
		if s == nil {
			return src, removed
		}
		var hits []Item
		for _, it := range s.Items {
			if match(it.Text) {
				hits = append(hits, it)
			}
		}
		if len(hits) <= keep {
			return src, removed
		}
		out, _, ok := d.removeItem(hits[0])
		if !ok {
			return src, removed
		}
		src = out
		removed++
	}
}

func isActive(s string) bool { return strings.HasPrefix(s, "Active") }

var trims = []string{
	"# M\n## Workflow state\n- note\n- Active 1\n- Active 2\n- keep me\n- Active 3\n## Other\n- Active x\n",
	"## Workflow state\n\n- Active 1\n- Active 2\n- Active 3\n",
	"## Workflow state\n\n- Active 1\n- Active 2\n- Active 3",
	"## Workflow state\r\n\r\n- Active 1\r\n- Active 2\r\n- Active 3\r\n\r\n## Next\r\n",
	"## Workflow state\n\n- Active 1\n\n- Active 2\n\n- Active 3\n\n- Active 4\n",
	"## Workflow state\n- Active 1\n\ntext\n\n- Active 2\n\npara\n\n- Active 3\n- Active 4\n",
	"## Workflow state\n\n- Active 1\n  continued\n  - nested Active\n- Active 2\n\n  second paragraph\n- Active 3\n",
	"## Workflow state\n\n* Active 1\n\n- Active 2\n\n+ Active 3\n+ Active 4\n",
	"## Workflow state\n\n1. Active 1\n2. Active 2\n\n- Active 3\n\n\n- user\n- Active 4\n",
	"---\nx: 1\n---\n## Workflow state\n- Active 1\n- Active 2\n",
	"\ufeff## Workflow state\n- Active 1\n\n- Active 2\n- Active 3\n\n",
	"## Workflow state\n- Active 1\n- Active 2\n## Workflow state\n- Active 3\n",
	"## Workflow state\r\n* Active\n* Active", // mixed line endings: the last one's goes whole
}

// TestTrimSectionAsOneByOne: one parse gives the bytes RemoveItem of each
// surplus item in turn gave. (Not always: a removal can change how the
// lines after it parse, "000\n* Active\n- \n  Active" makes the second
// item text of the paragraph; TrimSection goes by the file as it was.)
func TestTrimSectionAsOneByOne(t *testing.T) {
	for _, src := range trims {
		for keep := 0; keep <= 4; keep++ {
			want, wn := trimOneByOne([]byte(src), "Workflow state", 2, keep, isActive)
			got, n, kept, err := TrimSection([]byte(src), "Workflow state", 2, keep, isActive)
			if err != nil || len(kept) != 0 || n != wn || string(got) != string(want) {
				t.Errorf("keep %d of %q:\ngot  %q (%d, %v)\nwant %q (%d)", keep, src, got, n, err, want, wn)
			}
		}
	}
}

// TestTrimSectionLinear: a section of n protocol lines (a remote's
// MEMORY.md, say) is trimmed from one parse; a parse per removed line
// took 31 s of CPU for 4 000 lines. A file 8 times larger must not take
// much more CPU time per byte.
func TestTrimSectionLinear(t *testing.T) {
	for _, line := range []string{
		"- Active APEX workflow: p%d completed, entering the next ctx\n",   // one range to cut
		"- Active APEX workflow: p%d completed, entering the next ctx\n\n", // a range per item
	} {
		perByte := func(n int) float64 {
			src := append([]byte("# M\n\n## Workflow state\n"), repeat(line, n)...)
			return cpuPerByte(len(src), func() {
				out, removed, _, err := TrimSection(src, "Workflow state", 2, 20, isActive)
				if err != nil || removed != n-20 || len(out) >= len(src) {
					t.Fatalf("removed %d of %d, err %v", removed, n, err)
				}
			})
		}
		s, l := perByte(250), perByte(2000)
		t.Logf("%q: %.1f ns/byte for 250 lines, %.1f for 2000", line, s, l)
		if l > 3*s {
			t.Errorf("%q: trim time per byte grew %.1f times from 250 to 2000 lines: want linear", line, l/s)
		}
	}
}
