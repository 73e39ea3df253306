package parser

// strata: a bound on how deep lists and block quotes nest (see STRATA.md).

import (
	"strconv"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

const optMaxNesting OptionName = "MaxNesting"

type withMaxNesting struct {
	n int
}

func (o *withMaxNesting) SetParserOption(c *Config) {
	c.Options[optMaxNesting] = o.n
}

// WithMaxNesting is a functional option that bounds how deep lists and block
// quotes nest: a list or block quote that would start inside n others is not
// opened, and its line is read as the text (or other leaf block) of the
// innermost one. Each open container block costs every later line a look at
// that line, so a file nesting as deep as it is long (one line "- - - … x",
// or each line indented two more spaces) parses in time that grows with the
// square of its size; with the bound it grows with n times its size. n <= 0
// means no bound, as upstream.
func WithMaxNesting(n int) Option {
	return &withMaxNesting{n}
}

var nestingCutKey = NewContextKey()

// NestingCut returns the source offset of the first list or block quote
// that the parse with context pc did not open because of WithMaxNesting,
// and whether there was one.
func NestingCut(pc Context) (int, bool) {
	v, ok := pc.Get(nestingCutKey).(int)
	return v, ok
}

// nesting is the number of lists and block quotes from n up to the document.
func nesting(n ast.Node) int {
	d := 0
	for ; n != nil; n = n.Parent() {
		switch n.(type) {
		case *ast.List, *ast.Blockquote:
			d++
		}
	}
	return d
}

// nestsDeeper reports whether bp is a parser that opens a list or a block
// quote, the blocks WithMaxNesting bounds. It leaves the context as bp.Open
// would have when it opens nothing, and notes where the first such block
// was refused.
func nestsDeeper(bp BlockParser, parent ast.Node, line []byte, pos int, seg text.Segment, pc Context) bool {
	switch bp.(type) {
	case *listParser: // the cases where (*listParser).Open opens nothing
		last := pc.LastOpenedBlock().Node
		if _, lok := last.(*ast.List); lok || pc.Get(skipListParserKey) != nil {
			pc.Set(skipListParserKey, nil)
			return true
		}
		match, typ := parseListItem(line)
		if typ == notList {
			return true
		}
		if ast.IsParagraph(last) && last.Parent() == parent {
			if start, _ := strconv.Atoi(string(line[match[2] : match[3]-1])); typ == orderedList && start != 1 {
				return true
			}
			if match[4] < 0 || util.IsBlank(line[match[4]:match[5]]) {
				return true
			}
		}
	case *blockquoteParser:
		if pos >= len(line) || line[pos] != '>' {
			return true
		}
	default:
		return false
	}
	if pc.Get(nestingCutKey) == nil {
		pc.Set(nestingCutKey, max(seg.Start, seg.Start+pos-seg.Padding)) // line holds the padding
	}
	return true
}
