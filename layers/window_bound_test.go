package layers

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Past where strata reads MEMORY.md no entry is known: Window says from
// which line, and the text at prints says so, instead of a count of the
// entries not loaded that looks smaller than it is (attack35d L1).
func TestWindowPastTheBound(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# Memory\n\n")
	for s := 0; s < 1100; s++ {
		fmt.Fprintf(&b, "## S%d\n\n", s)
		for i := 0; i < 100; i++ {
			fmt.Fprintf(&b, "- item %d.%d\n", s, i)
		}
		b.WriteString("\n")
	}
	w := Window(".claude/memory/MEMORY.md", b.Bytes())
	if w.UnreadFrom < 201 || w.UnreadFrom > w.Lines {
		t.Fatalf("UnreadFrom = %d, want the line where reading stopped", w.UnreadFrom)
	}
	text := (&Context{Report: &Report{}, Memory: w}).Text()
	if !strings.Contains(text, fmt.Sprintf("everything from line %d on is unread by strata too", w.UnreadFrom)) {
		t.Errorf("at's text does not say where strata stopped reading:\n%.400s", text)
	}
}
