package parser

// strata: a bound on how many blocks a parse opens (see STRATA.md).

import "github.com/yuin/goldmark/text"

const optMaxBlocks OptionName = "MaxBlocks"

type withMaxBlocks struct {
	n int
}

func (o *withMaxBlocks) SetParserOption(c *Config) {
	c.Options[optMaxBlocks] = o.n
}

// WithMaxBlocks is a functional option that bounds how many blocks (of any
// kind and depth) a parse opens: at the first line that starts once n have
// opened, the parse stops as if the input ended there, and BlocksCut gives
// that line's offset. The blocks open at that line are closed as at the
// end of the input, so the last top-level block may be cut short; the ones
// before it are as a whole parse gives them. Each block is a node kept
// until the parse returns, so a file of empty headings ("#\n" repeated)
// costs a node for every two bytes; with the bound the parse's memory and
// time stop growing at about n blocks. n <= 0 means no bound, as upstream.
func WithMaxBlocks(n int) Option {
	return &withMaxBlocks{n}
}

var (
	blockBudgetKey = NewContextKey()
	blocksCutKey   = NewContextKey()
)

// blockBudget is how many more blocks the parse may open.
type blockBudget struct {
	left int
}

// BlocksCut returns the source offset of the line where the parse with
// context pc stopped because of WithMaxBlocks, and whether it stopped.
func BlocksCut(pc Context) (int, bool) {
	v, ok := pc.Get(blocksCutKey).(int)
	return v, ok
}

// spendBlock counts a block the parse opened.
func (p *parser) spendBlock(pc Context) {
	if p.maxBlocks > 0 {
		if b, _ := pc.Get(blockBudgetKey).(*blockBudget); b != nil {
			b.left--
		}
	}
}

// overBudget reports whether the parse has opened all the blocks it may
// and a line is left, and then notes where that line starts.
func (p *parser) overBudget(reader text.Reader, pc Context) bool {
	if p.maxBlocks <= 0 {
		return false
	}
	b, _ := pc.Get(blockBudgetKey).(*blockBudget)
	if b == nil || b.left > 0 {
		return false
	}
	line, seg := reader.PeekLine()
	if line == nil {
		return false
	}
	pc.Set(blocksCutKey, seg.Start-seg.Padding)
	return true
}
