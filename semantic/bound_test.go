package semantic

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Past where strata reads MEMORY.md (markdown.MaxBlocks, MaxLines) no
// section is known: those lines are a section of their own, named for the
// line they start at, not the last section read (attack35d L1: a change in
// ## S1400 was filed under ## S495 by diff --keys).
func TestReadSectionsPastTheBound(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# Memory\n\n")
	for s := 0; s < 1500; s++ {
		fmt.Fprintf(&b, "## S%d\n\n", s)
		for i := 0; i < 100; i++ {
			fmt.Fprintf(&b, "- item %d.%d\n", s, i)
		}
		b.WriteString("\n")
	}
	secs := readSections(b.Bytes())
	last := secs[len(secs)-1]
	if !strings.HasPrefix(last.Key, "(from line ") || !strings.Contains(strings.Join(last.Lines, "\n"), "- item 1400.7") {
		t.Fatalf("the last section is %q, holding %d lines; want the unread part, holding ## S1400's", last.Key, len(last.Lines))
	}
	for _, s := range secs[:len(secs)-1] {
		for _, l := range s.Lines {
			if l == "- item 1400.7" {
				t.Fatalf("## S1400's line is under %q", s.Key)
			}
		}
	}
}
