package parser

// strata: bounds on how many blocks a parse opens and how many lines it
// reads (see STRATA.md).

import (
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

const (
	optMaxBlocks OptionName = "MaxBlocks"
	optMaxLines  OptionName = "MaxLines"
)

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

type withMaxLines struct {
	n int
}

func (o *withMaxLines) SetParserOption(c *Config) {
	c.Options[optMaxLines] = o.n
}

// WithMaxLines is a functional option that bounds how many lines (blank
// ones too) a parse reads: once n have been read, the parse stops at the
// start of the next line as if the input ended there, and LinesCut gives
// that line's offset; the blocks open there are closed as WithMaxBlocks
// closes them. Each line of an open block is a segment kept in the block,
// which the block's parser and the paragraph transformers go over again,
// so one block of many short lines (a paragraph, a block quote, a code
// fence, a list item's continuation lines) costs memory and time in
// proportion to its lines, with a large factor, however few blocks the
// input opens. With the bound they stop growing at about n lines. n <= 0
// means no bound, as upstream.
func WithMaxLines(n int) Option {
	return &withMaxLines{n}
}

var (
	readBudgetKey = NewContextKey()
	blocksCutKey  = NewContextKey()
	linesCutKey   = NewContextKey()
)

// readBudget is how many more blocks the parse may open and lines it may
// read; a bound not set is never spent.
type readBudget struct {
	blocks, lines int
}

// newReadBudget is the budget of one parse.
func (p *parser) newReadBudget() *readBudget {
	b := &readBudget{blocks: p.maxBlocks, lines: p.maxLines}
	if p.maxBlocks <= 0 {
		b.blocks = 1
	}
	if p.maxLines <= 0 {
		b.lines = 1
	}
	return b
}

func (p *parser) bounded() bool { return p.maxBlocks > 0 || p.maxLines > 0 }

// BlocksCut returns the source offset of the line where the parse with
// context pc stopped because of WithMaxBlocks, and whether it stopped.
func BlocksCut(pc Context) (int, bool) {
	v, ok := pc.Get(blocksCutKey).(int)
	return v, ok
}

// LinesCut returns the source offset of the line where the parse with
// context pc stopped because of WithMaxLines, and whether it stopped.
func LinesCut(pc Context) (int, bool) {
	v, ok := pc.Get(linesCutKey).(int)
	return v, ok
}

func budget(pc Context) *readBudget {
	b, _ := pc.Get(readBudgetKey).(*readBudget)
	return b
}

// spendBlock counts a block the parse opened.
func (p *parser) spendBlock(pc Context) {
	if p.maxBlocks > 0 {
		if b := budget(pc); b != nil {
			b.blocks--
		}
	}
}

// spendLine counts a line the parse read.
func (p *parser) spendLine(pc Context) {
	if p.maxLines > 0 {
		if b := budget(pc); b != nil {
			b.lines--
		}
	}
}

// skipBlankLines is reader.SkipBlankLines with each blank line spent from
// the line budget: once that is gone it stops at the next line, blank or
// not, for overBudget to cut there. It reports whether a line is left.
func (p *parser) skipBlankLines(reader text.Reader, pc Context) bool {
	b := budget(pc)
	if p.maxLines <= 0 || b == nil {
		_, _, ok := reader.SkipBlankLines()
		return ok
	}
	for {
		line, _ := reader.PeekLine()
		if line == nil {
			return false
		}
		if b.lines <= 0 || !util.IsBlank(line) {
			return true
		}
		reader.AdvanceLine()
		b.lines--
	}
}

// overBudget reports whether the parse has opened all the blocks or read
// all the lines it may and a line is left, and then notes where that line
// starts (under the blocks' key when both are spent).
func (p *parser) overBudget(reader text.Reader, pc Context) bool {
	if !p.bounded() {
		return false
	}
	b := budget(pc)
	if b == nil || b.blocks > 0 && b.lines > 0 {
		return false
	}
	line, seg := reader.PeekLine()
	if line == nil {
		return false
	}
	key := blocksCutKey
	if b.blocks > 0 {
		key = linesCutKey
	}
	pc.Set(key, seg.Start-seg.Padding)
	return true
}
