package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// strata: a test of the change to this package (see STRATA.md).

// The link reference definitions that open a paragraph are cut from its
// lines at once: the lines after them stay where they are instead of
// being moved forward once per definition (n definitions cost n²).
func TestLinkReferencesCutOnce(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "[l%d]: /u%d\n", i, i)
	}
	b.WriteString("text\n")
	src := []byte(b.String())
	p := NewParser(WithBlockParsers(DefaultBlockParsers()...)) // no transformer yet
	para, ok := p.Parse(text.NewReader(src)).FirstChild().(*ast.Paragraph)
	if !ok || para.Lines().Len() != 101 {
		t.Fatalf("want one paragraph of 101 lines")
	}
	lines := para.Lines().Sliced(0, 101)
	LinkReferenceParagraphTransformer.Transform(para, text.NewReader(src), NewContext())
	kept := para.Lines()
	if seg := kept.At(0); kept.Len() != 1 || string(seg.Value(src)) != "text" {
		t.Fatalf("kept %d lines (%q), want the last", kept.Len(), seg.Value(src))
	}
	if &kept.Sliced(0, 1)[0] != &lines[100] {
		t.Fatalf("the lines after the definitions were moved")
	}
}

// depth is the most lists and block quotes any node of root is inside.
func depth(root ast.Node) int {
	most := 0
	var walk func(n ast.Node, d int)
	walk = func(n ast.Node, d int) {
		switch n.(type) {
		case *ast.List, *ast.Blockquote:
			d++
		}
		most = max(most, d)
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			walk(c, d)
		}
	}
	walk(root, 0)
	return most
}

// WithMaxNesting stops opening lists and block quotes at its bound, reads
// the line as text of the innermost one and notes where; without it the
// nesting is as deep as the input, as upstream.
func TestMaxNesting(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		unbounded int
		cut       int // offset of the first block not opened
	}{
		{"one line of list markers", "# h\n" + strings.Repeat("- ", 100) + "x\n", 100, 4 + 2*5},
		{"one line of quote markers", strings.Repeat("> ", 100) + "x\n", 100, 2 * 5},
		{"ordered and bullet", strings.Repeat("1. - ", 50) + "x\n", 100, 5*2 + 3},
		{"indented items", func() string {
			var b strings.Builder
			for i := range 50 {
				b.WriteString(strings.Repeat("  ", i) + "- x\n")
			}
			return b.String()
		}(), 50, 5*4*2 + 2*5},
		{"quote then list lines", "> - a\n>   > - b\n>   >   > - c\n>   >   >   - d\n", 7, 6 + 10 + 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			free := NewParser(WithBlockParsers(DefaultBlockParsers()...))
			if d := depth(free.Parse(text.NewReader(src))); d != tc.unbounded {
				t.Errorf("unbounded: depth %d, want %d", d, tc.unbounded)
			}
			pc := NewContext()
			p := NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxNesting(5))
			root := p.Parse(text.NewReader(src), WithContext(pc))
			if d := depth(root); d != 5 {
				t.Errorf("bounded at 5: depth %d", d)
			}
			if off, ok := NestingCut(pc); !ok || off != tc.cut {
				t.Errorf("cut at %d (%v), want %d (%q)", off, ok, tc.cut, src[min(tc.cut, len(src)):])
			}
		})
	}
	pc := NewContext()
	NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxNesting(5)).
		Parse(text.NewReader([]byte("- a\n  - b\n\n> c\n")), WithContext(pc))
	if off, ok := NestingCut(pc); ok {
		t.Errorf("shallow input: cut at %d", off)
	}
}

// nodes is the number of blocks under root, and its top-level blocks as
// kind@offset.
func nodes(root ast.Node) (int, []string) {
	n := 0
	var count func(ast.Node)
	count = func(b ast.Node) {
		for c := b.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Type() == ast.TypeBlock {
				n++
				count(c)
			}
		}
	}
	count(root)
	var top []string
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		top = append(top, fmt.Sprintf("%s@%d", c.Kind(), c.Pos()))
	}
	return n, top
}

// With WithMaxBlocks the parse stops at the first line that starts once n
// blocks have opened; the top-level blocks before the last one read are
// those of the whole parse.
func TestMaxBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		cut  int // the offset of the line where a bound of 10 stops
	}{
		{"empty headings", "# A\n## B\n- x\n" + strings.Repeat("#\n", 20), 13 + 2*5},
		{"one long list", "# A\n" + strings.Repeat("-\n", 20), 4 + 2*8},
		{"items with text", "- a\n- b\n- c\n- d\n- e\n- f\n", 4 * 5},
		{"paragraphs", strings.Repeat("text\nmore\n\n", 20), 11*9 + 5}, // inside the tenth,
		{"nested on one line", "- - - - - - a\n- b\n", 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			_, whole := nodes(NewParser(WithBlockParsers(DefaultBlockParsers()...)).Parse(text.NewReader(src)))
			pc := NewContext()
			root := NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxBlocks(10)).Parse(text.NewReader(src), WithContext(pc))
			n, top := nodes(root)
			off, ok := BlocksCut(pc)
			if !ok || off != tc.cut {
				t.Fatalf("cut at %d (%v), want %d", off, ok, tc.cut)
			}
			if n < 10 || n > 10+14 { // the line that passes the bound opens its blocks
				t.Errorf("%d blocks, want about 10", n)
			}
			for i := 0; i+1 < len(top); i++ {
				if i >= len(whole) || top[i] != whole[i] {
					t.Fatalf("top-level blocks %v, whole parse %v", top, whole)
				}
			}
		})
	}
	pc := NewContext()
	NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxBlocks(10)).
		Parse(text.NewReader([]byte("# a\n- b\n- c\n\npara\n")), WithContext(pc))
	if off, ok := BlocksCut(pc); ok {
		t.Errorf("small input: cut at %d", off)
	}
}

// With WithMaxLines the parse stops at the start of the line after the
// first n, blank or not, inside a block or between blocks; the top-level
// blocks before the last one read are those of the whole parse, and no
// block holds a line past the cut.
func TestMaxLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		cut  int // the offset of the line where a bound of 10 stops
	}{
		{"one paragraph", "# A\n" + strings.Repeat("a\n", 20), 4 + 2*9},
		{"blank lines", "# A\n" + strings.Repeat("\n", 20) + "b\n", 4 + 9},
		{"blank lines between paragraphs", strings.Repeat("a\n\n\n", 10), 4*3 + 2},
		{"a block quote's lazy lines", "> q\n" + strings.Repeat("a\n", 20), 4 + 2*9},
		{"an item's lines", "- a\n" + strings.Repeat("  b\n", 20), 4 + 4*9},
		{"an open fence", "```\n" + strings.Repeat("a\n", 20), 4 + 2*9},
		{"an HTML block", "<div>\n" + strings.Repeat("a\n", 20), 6 + 2*9},
		{"a setext heading to be", strings.Repeat("a\n", 20) + "---\n", 2 * 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte(tc.src)
			_, whole := nodes(NewParser(WithBlockParsers(DefaultBlockParsers()...)).Parse(text.NewReader(src)))
			pc := NewContext()
			root := NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxLines(10)).Parse(text.NewReader(src), WithContext(pc))
			_, top := nodes(root)
			off, ok := LinesCut(pc)
			if !ok || off != tc.cut {
				t.Fatalf("cut at %d (%v), want %d", off, ok, tc.cut)
			}
			if _, ok := BlocksCut(pc); ok {
				t.Errorf("cut by blocks too")
			}
			for i := 0; i+1 < len(top); i++ {
				if i >= len(whole) || top[i] != whole[i] {
					t.Fatalf("top-level blocks %v, whole parse %v", top, whole)
				}
			}
			_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
				if !entering || n.Type() != ast.TypeBlock {
					return ast.WalkContinue, nil
				}
				if l := n.Lines(); l.Len() > 0 && l.At(l.Len()-1).Stop > tc.cut {
					t.Errorf("%s holds a line past the cut: %d", n.Kind(), l.At(l.Len()-1).Stop)
				}
				return ast.WalkContinue, nil
			})
		})
	}
	// both bounds spent at the same line: the blocks' cut
	pc := NewContext()
	NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxBlocks(10), WithMaxLines(10)).
		Parse(text.NewReader([]byte(strings.Repeat("#\n", 20))), WithContext(pc))
	if off, ok := BlocksCut(pc); !ok || off != 20 {
		t.Errorf("headings: blocks cut at %d (%v), want 20", off, ok)
	}
	if off, ok := LinesCut(pc); ok {
		t.Errorf("headings: lines cut at %d too", off)
	}
	pc = NewContext()
	NewParser(WithBlockParsers(DefaultBlockParsers()...), WithMaxLines(10)).
		Parse(text.NewReader([]byte(strings.Repeat("a\n", 9)+"\n")), WithContext(pc))
	if off, ok := LinesCut(pc); ok {
		t.Errorf("ten lines: cut at %d", off)
	}
}
