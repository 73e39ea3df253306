package conflict

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-dev/strata/markdown"
)

// A MEMORY.md past the parse's bound (markdown.MaxLines): a line the
// earlier version added where the file was not read goes right after its
// anchor line, not into the last section read (attack35d M1: a fact added
// under "## S600" of a 103 000-line file was merged into "## S495",
// 10 000 lines away, when the later version deleted "## S0"). No line is
// lost either way.
func TestMergeMemoryPastTheBound(t *testing.T) {
	base, later := pastTheBound(t, "", "")
	earlier := bytes.Replace(base, []byte("- item 600.50\n"), []byte("- item 600.50\n- a new fact for S600\n"), 1)
	got, err := MergeMemory(base, earlier, later)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte("- item 600.50\n- a new fact for S600\n- item 600.51\n")) {
		i := bytes.Index(got, []byte("- a new fact for S600"))
		if i < 0 {
			t.Fatal("the new line is lost")
		}
		head := got[:i]
		t.Fatalf("the new line went under %q, not after its anchor in ## S600", head[bytes.LastIndex(head, []byte("\n## "))+1:][:8])
	}
	if bytes.Contains(got, []byte("## S0\n")) || strings.Count(string(got), "\n") != strings.Count(string(later), "\n")+1 {
		t.Errorf("the merge is not the later version plus the one line")
	}
}

// A line added after a line that is not unique in the file — a closing
// code fence, a blank line — past the bound goes after that very line, as
// the diff pairs the two versions' lines, not after the first line of the
// same text (attack35e M1: it went to the top of the file, inside a code
// block there).
func TestMergeMemoryPastTheBoundCommonAnchor(t *testing.T) {
	base, later := pastTheBound(t, "```\ntop code\n```\n\n", "\n```\ncode %d\n```\n")
	for _, tc := range []struct{ name, after, add string }{
		{"after a closing fence", "code 600\n```\n", "- after the fence of S600\n"},
		{"after a blank line", "- item 600.99\n\n", "A paragraph for S600.\n\n"},
	} {
		i := bytes.Index(base, []byte(tc.after)) + len(tc.after)
		earlier := append(append(append([]byte{}, base[:i]...), tc.add...), base[i:]...)
		got, err := MergeMemory(base, earlier, later)
		if err != nil {
			t.Fatal(err)
		}
		want := tc.after + tc.add
		if !bytes.Contains(got, []byte(want)) {
			j := bytes.Index(got, []byte(tc.add))
			t.Errorf("%s: the new line is at byte %d of %d, not after %q in ## S600", tc.name, j, len(got), tc.after)
		}
	}
}

// pastTheBound is a MEMORY.md (base) of 1 000 sections "## S<n>" of 100
// items each, past the lines strata reads: top goes after its title, and
// tail (given the section's number) at the end of each section, before its
// blank line. later is base without "## S0", as the machine that recorded
// later left it.
func pastTheBound(t *testing.T, top, tail string) (base, later []byte) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# Memory\n\n" + top)
	for s := 0; s < 1000; s++ {
		fmt.Fprintf(&b, "## S%d\n\n", s)
		for i := 0; i < 100; i++ {
			fmt.Fprintf(&b, "- item %d.%d\n", s, i)
		}
		if tail != "" {
			fmt.Fprintf(&b, tail, s)
		}
		b.WriteString("\n")
	}
	base = b.Bytes()
	if d, err := markdown.Parse(base); err != nil || d.ReadTo() == len(base) {
		t.Fatalf("the file is read whole (%v): the test needs one past the bound", err)
	}
	s0 := bytes.Index(base, []byte("## S0\n"))
	s1 := bytes.Index(base, []byte("## S1\n"))
	return base, append(append([]byte{}, base[:s0]...), base[s1:]...)
}

// Past the bound, where the later version rewrote the fences around the
// anchor, the diff can pair the anchor (a closing fence) with another
// block's opening fence: a line the earlier version added after its code
// block goes after the block it would land in instead, outside every
// fence, as it was written (attack35f L1: it went inside that block and
// stopped reading as a list item). A line added inside a code block stays
// inside one.
func TestMergeMemoryPastTheBoundRewrittenFences(t *testing.T) {
	var pre strings.Builder
	pre.WriteString("# M\n\n")
	for i := 0; i < markdown.MaxLines+100; i++ {
		fmt.Fprintf(&pre, "- f%d\n", i)
	}
	file := func(lines ...string) []byte { return []byte(pre.String() + strings.Join(lines, "\n") + "\n") }
	const f = "```"
	base := file("", f, "A", f)
	rewritten := file("B", f, "c1", f, "A", f, "c1", f, "")
	for _, tc := range []struct {
		name           string
		earlier, later []byte
		add            string
		inside         bool
	}{
		{"after the block", file("", f, "A", f, "- NEW"), rewritten, "- NEW", false},
		{"inside the block", file("", f, "A", "NEW CODE", f), file("B", "", f, "A", f), "NEW CODE", true},
	} {
		later := tc.later
		got, err := MergeMemory(base, tc.earlier, later)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(got, []byte("\n"+tc.add+"\n"))
		if i < 0 {
			t.Fatalf("%s: the line is lost", tc.name)
		}
		if _, in := fenceAround(got, i+1); in != tc.inside {
			t.Errorf("%s: inside a code block: %v, want %v; the file ends:\n%s", tc.name, in, tc.inside, got[len(pre.String()):])
		}
		if n := bytes.Count(got, []byte("\n")); n != bytes.Count(later, []byte("\n"))+1 {
			t.Errorf("%s: %d lines, want the later version's and one", tc.name, n)
		}
	}
}

func TestFenceAround(t *testing.T) {
	b := []byte("a\n```go\nx\n````\ny\n```\n~~~\nz\n~~~~ \nq\n   ```\n``` no `backtick`\n~~~\nunclosed\n")
	for _, tc := range []struct {
		line int
		open bool
		end  int // line after the closing fence, -1: none
	}{
		{0, false, -1}, {1, false, -1}, {2, true, 4}, {3, true, 4}, {4, false, -1}, {5, false, -1},
		{6, true, 11}, {7, true, 11}, {8, true, 11}, {9, true, 11}, {10, true, 11}, {11, false, -1},
		{12, false, -1}, {13, true, -1}, {14, true, -1},
	} {
		p := 0
		for n := 0; n < tc.line; n++ {
			p += bytes.IndexByte(b[p:], '\n') + 1
		}
		end, open := fenceAround(b, p)
		want := -1
		if tc.end >= 0 {
			want = 0
			for n := 0; n < tc.end; n++ {
				want += bytes.IndexByte(b[want:], '\n') + 1
			}
		}
		if open != tc.open || open && end != want {
			t.Errorf("line %d: open %v end %d, want %v %d", tc.line, open, end, tc.open, want)
		}
	}
}
