package text

import (
	"bytes"
	"fmt"
	"testing"
)

// strata: tests of the two changes to this package (see STRATA.md).

// LineOffset goes on from the last position it was asked about on the
// same line: a line of n container markers ("> > > ...") reads each byte
// once, not n times. The test changes a byte the reader has passed: a
// count from the line head would see it.
func TestLineOffsetReadsEachByteOnce(t *testing.T) {
	src := append(bytes.Repeat([]byte("a"), 100), '\n')
	r := NewReader(src)
	for i := 1; i <= 50; i++ {
		r.Advance(1)
		if got := r.LineOffset(); got != i {
			t.Fatalf("offset %d after %d advances", got, i)
		}
	}
	src[0] = '\t' // a tab would now count 4 columns
	r.Advance(1)
	if got := r.LineOffset(); got != 51 {
		t.Fatalf("offset %d after 51 advances: the line was read again from its head", got)
	}
	r.AdvanceLine()
	if got := r.LineOffset(); got != 0 {
		t.Fatalf("offset %d at a new line", got)
	}
}

// A block reader's Value finds the line of a segment by bisection: it
// reads the starts of O(log n) lines, not of every line after it. The test
// spoils the start of the last line, which a bisection for the first line
// never reads.
func TestBlockReaderValueBisects(t *testing.T) {
	var src []byte
	segs := NewSegments()
	for i := range 100 {
		line := fmt.Appendf(nil, "line %03d\n", i)
		segs.Append(NewSegment(len(src), len(src)+len(line)))
		src = append(src, line...)
	}
	r := NewBlockReader(src, segs)
	first := segs.At(0)
	segs.Set(99, NewSegment(0, 1))
	if got := string(r.Value(first)); got != "line 000\n" {
		t.Fatalf("Value %q: the lines after the segment's were read", got)
	}
}
