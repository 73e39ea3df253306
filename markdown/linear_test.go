package markdown

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// repeat is n copies of line, with its number in place of %d.
func repeat(line string, n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, line, i)
	}
	return []byte(b.String())
}

// TestLineNumbersLinear: the work of numbering the lines of sections and
// items grows with the file, not with the file times its headings.
func TestLineNumbersLinear(t *testing.T) {
	for _, line := range []string{"# h%d\n", "- item %d\n", "## h%d\n- a\n- b\n### s\n- c\n\n"} {
		work := func(n int) (int, int) {
			src := repeat(line, n)
			d, err := Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			return d.lineWork, len(src)
		}
		w1, s1 := work(1000)
		w4, s4 := work(4000)
		if w4 >= 6*w1 || w4 > 2*s4 {
			t.Errorf("%q: line numbering read %d bytes of %d for 1000, %d of %d for 4000: want linear", line, w1, s1, w4, s4)
		}
	}
}

// allocated is the bytes Parse allocates for src.
func allocated(t *testing.T, src []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Parse(src); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseSkipsInlines: strata reads the block structure only, so the
// content of a line (here an unclosed link opener, repeated, on which
// goldmark's inline parser is quadratic) costs no inline nodes.
func TestParseSkipsInlines(t *testing.T) {
	src := []byte("## L\n- " + strings.Repeat("[a](", 20000) + "\n")
	n := allocated(t, src)
	t.Logf("%d bytes allocated for %d", n, len(src))
	if n > 8*uint64(len(src)) {
		t.Errorf("Parse of %d bytes allocated %d bytes: want less than 8 per byte", len(src), n)
	}
}

// deepLine is one line nesting n lists ("- - - … x") under a section.
func deepLine(n int) []byte {
	return []byte("# M\n\n## Workflow state\n" + strings.Repeat("- ", n) + "x\n")
}

// deepIndent is n list items, each indented two spaces more than the one
// before, so each nests in the one before; the file is about n² bytes.
func deepIndent(n int) []byte {
	var b strings.Builder
	b.WriteString("# M\n\n## Workflow state\n")
	for i := range n {
		b.WriteString(strings.Repeat("  ", i) + "- x\n")
	}
	return []byte(b.String())
}

// perByte is the CPU time Parse of src takes per byte.
func perByte(t *testing.T, src []byte) float64 {
	return cpuPerByte(len(src), func() {
		if _, err := Parse(src); err != nil {
			t.Fatal(err)
		}
	})
}

// cpuPerByte is the CPU time f takes per byte of an input of size bytes:
// the least, over three batches, of a batch of runs that takes at least
// 20ms.
func cpuPerByte(size int, f func()) float64 {
	best := math.Inf(1)
	for range 3 {
		n, start := 0, cpuTime()
		for n == 0 || cpuTime()-start < 20*time.Millisecond {
			f()
			n++
		}
		best = min(best, float64(cpuTime()-start)/float64(n*size))
	}
	return best
}

// TestDeepNestingLinear: goldmark looks at each line once for every list
// the line is in, so a file nesting as deep as it is long cost the square
// of its size (a 64 KB line of "- " took half a minute, 9 MB of indented
// items did not finish); with nesting bounded at MaxNesting it is linear.
// Compared within one run, not against a deadline: a file 8 times larger
// (64 times for the indented items) must not take much more CPU time per
// byte than the small one (quadratic parsing takes 8 times more).
func TestDeepNestingLinear(t *testing.T) {
	for _, tc := range []struct {
		name         string
		small, large []byte
	}{
		{"one line of list markers", deepLine(2000), deepLine(16000)},
		{"indented items", deepIndent(100), deepIndent(800)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perByte(t, tc.small) // warm up
			s, l := perByte(t, tc.small), perByte(t, tc.large)
			t.Logf("%d bytes: %.1f ns/byte; %d bytes: %.1f ns/byte", len(tc.small), s, len(tc.large), l)
			if l > 3*s {
				t.Errorf("parse time per byte grew %.1f times from %d to %d bytes: want linear", l/s, len(tc.small), len(tc.large))
			}
		})
	}
}

// TestDeepNestingReadAsText: lists nested deeper than MaxNesting are read
// as text with one warning at the first of them, the top-level items and
// sections stay as they were, and an edit keeps every byte.
func TestDeepNestingReadAsText(t *testing.T) {
	src := deepLine(MaxNesting + 8)
	d, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	w := d.Warnings()
	if len(w) != 1 || w[0].Line != 4 || w[0].Col != 2*MaxNesting+1 || !strings.Contains(w[0].Message, "nest more than 32 deep") {
		t.Fatalf("warnings %+v, want one at 4:%d", w, 2*MaxNesting+1)
	}
	s := d.Find("Workflow state", 2)
	if s == nil || len(s.Items) != 1 || s.Items[0].Text != strings.Repeat("- ", MaxNesting+7)+"x" || s.Items[0].Line != 4 {
		t.Fatalf("section %+v", s)
	}
	out, changed, err := AddItem(src, "Workflow state", 2, "Active APEX workflow: p1 completed, entering p2 ctx")
	if err != nil || !changed || string(out) != string(src)+"- Active APEX workflow: p1 completed, entering p2 ctx\n" {
		t.Fatalf("AddItem: changed %v err %v\n%q", changed, err, out)
	}
	checkUndo(t, deepIndent(3*MaxNesting), "Workflow state", 2, "a learning")

	for _, shallow := range [][]byte{deepLine(MaxNesting), deepIndent(MaxNesting), []byte(strings.Repeat("> ", MaxNesting) + "x\n")} {
		if d, err := Parse(shallow); err != nil || len(d.Warnings()) != 0 {
			t.Errorf("%d levels: warnings %+v, err %v", MaxNesting, d.Warnings(), err)
		}
	}
}

// TestDeepNestingMemory: goldmark kept a note per open block for every
// line of a run of nested blocks, so 9 MB of lines inside 32 lists took
// 600 MB; it keeps those of the line before only.
func TestDeepNestingMemory(t *testing.T) {
	src := deepLine(MaxNesting)
	for len(src) < 1<<20 {
		src = append(src, strings.Repeat(" ", 70)+"Active APEX workflow: p001 completed, entering p002 ctx\n"...)
	}
	n := allocated(t, src)
	t.Logf("%d bytes allocated for %d", n, len(src))
	if n > 8*uint64(len(src)) {
		t.Errorf("Parse of %d bytes allocated %d bytes: want less than 8 per byte", len(src), n)
	}
}
