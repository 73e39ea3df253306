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
