package goldmark_test

import (
	"encoding/json"
	"os"
	"testing"

	. "github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/testutil"
)

// strata: a bound on nesting (parser.WithMaxNesting, see STRATA.md) that no
// example of the CommonMark spec reaches changes none of their output.
func TestSpecWithMaxNesting(t *testing.T) {
	bs, err := os.ReadFile("_test/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec []commonmarkSpecTestCase
	if err := json.Unmarshal(bs, &spec); err != nil {
		t.Fatal(err)
	}
	cases := make([]testutil.MarkdownTestCase, 0, len(spec))
	for _, c := range spec {
		cases = append(cases, testutil.MarkdownTestCase{No: c.Example, Markdown: c.Markdown, Expected: c.HTML})
	}
	md := New(WithParserOptions(parser.WithMaxNesting(4)), WithRendererOptions(html.WithXHTML(), html.WithUnsafe()))
	testutil.DoTestCases(md, cases, t)
}
