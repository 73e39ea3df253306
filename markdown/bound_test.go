package markdown

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// workflowThen is a workflow section of one item, then n copies of line.
func workflowThen(line string, n int) []byte {
	return []byte("# Memory\n\n## Workflow state\n\n- a note\n" + strings.Repeat(line, n))
}

// TestMaxBlocksBoundsParse: a file of empty headings ("#" lines) cost some
// 400 bytes of memory per byte in every parse (3 GB for 8 MB); strata
// reads no more than MaxBlocks blocks, so a file four times longer past
// the bound costs the parse no more.
func TestMaxBlocksBoundsParse(t *testing.T) {
	for _, line := range []string{"#\n", "-\n", "a\n\n"} {
		small, large := workflowThen(line, 2*MaxBlocks), workflowThen(line, 8*MaxBlocks)
		allocated(t, small) // warm up
		s, l := allocated(t, small), allocated(t, large)
		t.Logf("%q: %d bytes allocated for %d, %d for %d", line, s, len(small), l, len(large))
		if l > s+s/4 {
			t.Errorf("%q: Parse allocated %d bytes for %d, %d for %d: want no more past MaxBlocks", line, s, len(small), l, len(large))
		}
	}
}

// TestMaxBlocksCut: past MaxBlocks the file has no sections or items, one
// warning names the line where reading stopped, and an edit that needs
// the rest is refused there; an edit before it keeps every byte.
func TestMaxBlocksCut(t *testing.T) {
	src := append(workflowThen("", 0), repeat("# h%d\n", MaxBlocks+10)...)
	d, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	// 5 blocks before the headings h0, h1, ..., then MaxBlocks-5 of them;
	// the last one read may go on, so reading stops at its line
	cutLine := 5 + MaxBlocks - 5
	if n := len(d.Sections()); n != 2+MaxBlocks-6 {
		t.Errorf("%d sections", n)
	}
	if w := d.Warnings(); len(w) != 1 || w[0].Line != cutLine || !strings.Contains(w[0].Message, "more than 100000 blocks: strata reads no sections or items from this line on") {
		t.Errorf("warnings %+v, want one at line %d", w, cutLine)
	}
	if s := d.Find("Workflow state", 2); s == nil || s.EndLine != 5 || len(s.Items) != 1 {
		t.Fatalf("workflow section %+v", s)
	}
	if l := d.Lines(); l != 5+MaxBlocks+10 {
		t.Errorf("%d lines", l)
	}
	if s := d.Sections()[len(d.Sections())-1]; s.Heading != "h99993" || s.EndLine != d.Lines() {
		t.Errorf("the last section read ends at line %d, want the last line %d", s.EndLine, d.Lines())
	}

	const line = "Active APEX workflow: p1 completed, entering p2 ctx"
	out, changed, err := AddItem(src, "Workflow state", 2, line)
	want := bytes.Replace(src, []byte("- a note\n"), []byte("- a note\n- "+line+"\n"), 1)
	if err != nil || !changed || !bytes.Equal(out, want) {
		t.Fatalf("AddItem before the cut: changed %v err %v", changed, err)
	}
	back, changed, err := RemoveItem(out, "Workflow state", 2, line)
	if err != nil || !changed || !bytes.Equal(back, src) {
		t.Fatalf("RemoveItem before the cut: changed %v err %v", changed, err)
	}
	trimmed, n, kept, err := TrimSection(out, "Workflow state", 2, 1, func(string) bool { return true })
	if err != nil || n != 1 || len(kept) != 0 || !bytes.Equal(trimmed, bytes.Replace(src, []byte("- a note\n"), []byte("- "+line+"\n"), 1)) {
		t.Fatalf("TrimSection before the cut: removed %d kept %v err %v", n, kept, err)
	}

	var ue *UnsafeError
	for name, edit := range map[string]func([]byte) ([]byte, bool, error){
		"add a heading":                func(src []byte) ([]byte, bool, error) { return AddItem(src, "Learnings", 2, "x") },
		"add to the last section read": func(src []byte) ([]byte, bool, error) { return AddItem(src, "h99993", 1, "x") },
		"remove the last section read": func(src []byte) ([]byte, bool, error) { return RemoveSection(src, "h99993", 1) },
	} {
		out, changed, err := edit(src)
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafe) || ue.Line != cutLine || changed || !bytes.Equal(out, src) {
			t.Errorf("%s: changed %v, err %v; want refused at line %d", name, changed, err, cutLine)
		}
	}

	// one list of empty items past the bound: the section runs into it
	items := workflowThen("-\n", MaxBlocks+10)
	for name, edit := range map[string]func([]byte) ([]byte, bool, error){
		"add":    func(src []byte) ([]byte, bool, error) { return AddItem(src, "Workflow state", 2, line) },
		"remove": func(src []byte) ([]byte, bool, error) { return RemoveItem(src, "Workflow state", 2, "a note") },
		"trim": func(src []byte) ([]byte, bool, error) {
			out, n, _, err := TrimSection(src, "Workflow state", 2, 0, func(string) bool { return true })
			return out, n > 0, err
		},
	} {
		out, changed, err := edit(items)
		if !errors.As(err, &ue) || ue.Line != 5 || changed || !bytes.Equal(out, items) {
			t.Errorf("%s in a list past the bound: changed %v, err %v; want refused at line 5", name, changed, err)
		}
	}
}

// TestMaxLinesBoundsParse: one block of many short lines (a paragraph, a
// block quote's lazy lines, a code fence, an HTML block, a list item's
// continuation lines) opened one block and cost 0.5-1 GB per 8 MB in
// every parse; strata reads no more than MaxLines lines, so a file four
// times longer past the bound costs the parse no more.
func TestMaxLinesBoundsParse(t *testing.T) {
	for _, tc := range []struct{ open, line string }{
		{"\n## Notes\n", "a\n"},
		{"\n## Notes\n> q\n", "a\n"},
		{"\n## Notes\n```\n", "a\n"},
		{"\n## Notes\n<div>\n", "a\n"},
		{"", "  a\n"},
		{"\n## Notes\n", "\n"},
	} {
		small := append(workflowThen(tc.open, 1), strings.Repeat(tc.line, 2*MaxLines)...)
		large := append(workflowThen(tc.open, 1), strings.Repeat(tc.line, 8*MaxLines)...)
		allocated(t, small) // warm up
		s, l := allocated(t, small), allocated(t, large)
		t.Logf("%q %q: %d bytes allocated for %d, %d for %d", tc.open, tc.line, s, len(small), l, len(large))
		if l > s+s/4 {
			t.Errorf("%q %q: Parse allocated %d bytes for %d, %d for %d: want no more past MaxLines", tc.open, tc.line, s, len(small), l, len(large))
		}
	}
}

// TestMaxLinesCut: a paragraph running past MaxLines is not read from its
// first line on; one warning says so there, the sections before it are
// edited byte for byte, and an edit of the section that runs into it is
// refused at that line.
func TestMaxLinesCut(t *testing.T) {
	src := append(workflowThen("\n## Notes\n", 1), strings.Repeat("a\n", MaxLines+10)...)
	d, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	const cutLine = 8 // "# Memory", "", "## Workflow state", "", "- a note", "", "## Notes", then the paragraph
	if w := d.Warnings(); len(w) != 1 || w[0].Line != cutLine || w[0].Message != "more than 100000 lines: strata reads no sections or items from this line on, and makes no edit that needs them; the file is kept as it is" {
		t.Errorf("warnings %+v, want one at line %d", w, cutLine)
	}
	if s := d.Find("Workflow state", 2); s == nil || s.EndLine != 6 || len(s.Items) != 1 {
		t.Fatalf("workflow section %+v", s)
	}
	const line = "Active APEX workflow: p1 completed, entering p2 ctx"
	out, changed, err := AddItem(src, "Workflow state", 2, line)
	want := bytes.Replace(src, []byte("- a note\n"), []byte("- a note\n- "+line+"\n"), 1)
	if err != nil || !changed || !bytes.Equal(out, want) {
		t.Fatalf("AddItem before the cut: changed %v err %v", changed, err)
	}
	if back, changed, err := RemoveItem(out, "Workflow state", 2, line); err != nil || !changed || !bytes.Equal(back, src) {
		t.Fatalf("RemoveItem before the cut: changed %v err %v", changed, err)
	}
	var ue *UnsafeError
	out, changed, err = AddItem(src, "Notes", 2, "x")
	if !errors.As(err, &ue) || ue.Line != cutLine || !strings.Contains(ue.Reason, "(more than 100000 lines)") || changed || !bytes.Equal(out, src) {
		t.Errorf("AddItem to the section running past the bound: changed %v, err %v; want refused at line %d", changed, err, cutLine)
	}
}
