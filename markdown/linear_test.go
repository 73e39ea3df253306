package markdown

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
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
