// Package markdown reads and edits the L2 memory file (MEMORY.md): goldmark
// locates the sections and their list items, and every edit is a splice of
// raw byte ranges, so every byte outside the edited lines stays exactly as it
// was (front matter, a BOM, CRLF line endings, tables, code fences, HTML
// comments, a missing final newline). It is the only importer of goldmark.
//
// goldmark gives block start positions but no end offsets and has no writer.
// A top-level block therefore ends where the next one starts, less the blank
// lines between them; a list item ends where the next item starts (the last
// one where its list ends); a section runs from its heading to the next
// heading of the same or a higher level.
package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// ErrUnsafe is returned when an edit would not read back as intended (the
// end of the file is inside an open code fence or HTML block, say); nothing
// is changed.
var ErrUnsafe = errors.New("edit would not read back as a list item; file left unchanged")

// ErrRereads is the cause of the *UnsafeError of a removal that would
// change how the lines around the removed ones read (see RemoveItem).
var ErrRereads = errors.New("removal would change how the lines around it read")

// UnsafeError is ErrUnsafe with its cause, when the parse names one: the
// line a reader fixes.
type UnsafeError struct {
	Line   int    // 1-based
	Reason string // what is wrong at Line
	Err    error  // a sentinel to branch on (ErrRereads), or nil
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("line %d: %s; file left unchanged", e.Line, e.Reason)
}

// Unwrap gives ErrUnsafe, and Err when set.
func (e *UnsafeError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrUnsafe, e.Err}
	}
	return []error{ErrUnsafe}
}

// Doc is a parsed memory file. Offsets are into the bytes given to Parse.
type Doc struct {
	src      []byte
	body     int    // where the Markdown starts: after a UTF-8 BOM and YAML front matter
	eol      string // the file's dominant line ending, for new lines
	blocks   []block
	sections []Section
	warnings []Warning
	// cut is where strata stopped reading the file (MaxBlocks, MaxLines):
	// the start of the top-level block it would have read next, or
	// len(src); over names the bound, "100000 blocks" or "100000 lines".
	cut  int
	over string
	// openFence is the line of a top-level code fence never closed, which
	// runs to the end of the file; 0 when none.
	openFence int
	// newlines holds the offset of every "\n" of src before cut, in
	// order: a line number is a binary search, not a count from the start
	// of the file (which made a file of n headings or items cost n²).
	newlines []int
	// lineWork is how many bytes finding line numbers has read; tests hold
	// it linear in the size of the file.
	lineWork int
}

type blockKind int

const (
	kindOther blockKind = iota
	kindHeading
	kindList
)

// block is one top-level block.
type block struct {
	kind   blockKind
	name   string // goldmark's kind of the block (Paragraph, HTMLBlock, FencedCodeBlock, ...)
	html   int    // an HTML block's type (CommonMark's 1-7), else 0
	start  int    // start of its first line
	end    int    // start of the line after its last non-blank line (or the end of the file)
	level  int    // heading level
	text   string
	bullet bool // a bullet (not ordered) list
	items  []Item
}

// Section is a heading and what belongs to it.
type Section struct {
	Heading   string   `json:"heading"`
	Path      []string `json:"path"` // headings from the outermost to this one
	Level     int      `json:"level"`
	StartLine int      `json:"start_line"` // 1-based, inclusive
	EndLine   int      `json:"end_line"`
	Items     []Item   `json:"items"` // items of the lists before the first subsection
	Start     int      `json:"-"`     // byte range: the heading line to the next heading of this level or higher
	End       int      `json:"-"`
	headEnd   int      // after the heading's lines
	bodyEnd   int      // the first heading of any level after this one
	lists     []int    // indexes into Doc.blocks of the lists in the body
}

// Item is one top-level list item.
type Item struct {
	Text   string `json:"text"` // content without the marker; continuation lines joined by "\n"
	Line   int    `json:"line"`
	Start  int    `json:"-"` // start of its first line
	End    int    `json:"-"` // start of the line after its last non-blank line
	prefix string // indentation, marker and spacing of its first line
}

// Warning is something a reader should know about a memory file; it does
// not make the file invalid.
type Warning struct {
	Line    int    `json:"line"`
	Col     int    `json:"column,omitempty"` // 1-based, in bytes; 0 when the warning is of the whole line
	Message string `json:"message"`
}

// MaxNesting is how deep lists and block quotes nest before strata reads a
// deeper one as text. goldmark looks at every line once per container
// block the line is in, so a file nesting as deep as it is long (one line
// "- - - … x", each line indented two more spaces) cost the square of its
// size to parse: a 64 KB line took half a minute. Markdown that people
// write nests a few levels; strata reads only the top-level blocks, which
// the bound leaves as they are.
const MaxNesting = 32

// MaxBlocks is how many blocks (headings, lists, items, paragraphs, of
// any depth) strata reads of a memory file. goldmark keeps a node for
// every block until the parse ends, and strata a section for every
// heading, so a file of empty headings ("#" lines) took some 400 bytes of
// memory per byte: 3 GB and ten seconds for 8 MB, in every SessionStart
// hook and more in each layer step. Past the bound the rest of the file is
// kept as it is but not read: it has no sections or items, a warning says
// where reading stopped, and an edit that needs the rest (a section that
// runs into it, a heading to add at the end of the file) is refused. A
// memory file people write has a few hundred blocks; Claude Code loads its
// first 200 lines.
const MaxBlocks = 100_000

// MaxLines is how many lines (blank ones too) strata reads of a memory
// file, with the same consequences as MaxBlocks past it. One block can
// hold any number of lines, and goldmark keeps a segment for each line of
// an open block, which its parser and the paragraph transformers go over
// again, and strata an offset for each line read: one 8 MB paragraph (or
// block quote, list item, code fence, HTML block) of short lines cost
// 0.5-1 GB in every SessionStart hook and 1.8 GB in a layer step, while
// opening one block. Blocks are bounded by MaxBlocks and lines by this, so
// the parse costs at most a small multiple of max_size whatever the
// shape of the file; a single long line costs no more than its bytes (the
// parse has no inline parsers). 100 000 lines is some 500 times the 200
// Claude Code loads.
const MaxLines = 100_000

// Parse reads a memory file. It fails only when goldmark itself fails.
func Parse(src []byte) (d *Doc, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("markdown parser: %v", r)
		}
	}()
	d = &Doc{src: src, eol: dominantEOL(src)}
	d.body = bodyStart(src)
	body := src[d.body:]
	// Block parsers only: strata reads blocks and their raw lines, never an
	// inline node, and goldmark's inline parsers are quadratic on short
	// patterns ("[a](" repeated). The paragraph transformer stays: a
	// paragraph of link reference definitions is not the text of a setext
	// heading.
	pc := parser.NewContext()
	root := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithMaxNesting(MaxNesting),
		parser.WithMaxBlocks(MaxBlocks),
		parser.WithMaxLines(MaxLines),
	).Parse(text.NewReader(body), parser.WithContext(pc))
	d.cut = len(src)
	last := root.LastChild()
	if _, ok := parser.BlocksCut(pc); ok {
		d.over = fmt.Sprintf("%d blocks", MaxBlocks)
	} else if _, ok := parser.LinesCut(pc); ok {
		d.over = fmt.Sprintf("%d lines", MaxLines)
	}
	if d.over != "" {
		// the last top-level block read may go on past where the parse
		// stopped: reading stops at its start
		for last != nil && last.Pos() < 0 {
			last = last.PreviousSibling()
		}
		if last != nil {
			d.cut = d.lineStart(d.body + last.Pos())
		} else {
			d.cut = d.body
		}
	}
	d.newlines = newlineIndex(src[:d.cut])
	d.lineWork = d.cut
	if off, ok := parser.NestingCut(pc); ok {
		off += d.body
		d.warnings = append(d.warnings, Warning{Line: d.Line(off), Col: off - d.lineStart(off) + 1,
			Message: fmt.Sprintf("lists and block quotes nest more than %d deep: strata reads the deeper ones as text", MaxNesting)})
	}
	if d.cut < len(src) {
		d.warnings = append(d.warnings, Warning{Line: d.Line(d.cut),
			Message: fmt.Sprintf("more than %s: strata reads no sections or items from this line on, and makes no edit that needs them; the file is kept as it is", d.over)})
	}
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Pos() < 0 {
			continue
		}
		if d.cut < len(src) && n == last {
			break
		}
		b := block{start: d.lineStart(d.body + n.Pos()), name: n.Kind().String()}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			b.html = int(n.HTMLBlockType)
		case *ast.Heading:
			b.kind, b.level = kindHeading, n.Level
			b.text = headingText(n, body)
		case *ast.List:
			b.kind, b.bullet = kindList, !n.IsOrdered()
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				if it.Pos() >= 0 {
					b.items = append(b.items, Item{Start: d.lineStart(d.body + it.Pos())})
				}
			}
		case *ast.FencedCodeBlock:
			if !fenceClosed(n, body) {
				d.openFence = d.Line(d.body + n.Pos())
				d.warnings = append(d.warnings, Warning{Line: d.openFence, Message: "code fence is never closed: the rest of the file is code"})
			}
		}
		d.blocks = append(d.blocks, b)
	}
	for i := range d.blocks {
		next := d.cut
		if i+1 < len(d.blocks) {
			next = d.blocks[i+1].start
		}
		d.blocks[i].end = d.trimBlank(next, d.blocks[i].start)
		b := &d.blocks[i]
		for j := range b.items {
			stop := b.end
			if j+1 < len(b.items) {
				stop = d.trimBlank(b.items[j+1].Start, b.items[j].Start)
			}
			d.fillItem(&b.items[j], stop)
		}
	}
	d.buildSections()
	return d, nil
}

func headingText(h *ast.Heading, body []byte) string {
	var b strings.Builder
	lines := h.Lines()
	for i := 0; i < lines.Len(); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		seg := lines.At(i)
		b.Write(bytes.TrimSpace(seg.Value(body)))
	}
	return strings.TrimSpace(b.String())
}

// fenceClosed reports whether a fenced code block ends with a closing fence.
func fenceClosed(n *ast.FencedCodeBlock, body []byte) bool {
	start := n.Pos()
	line := body[start:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	ch := line[0]
	width := 0
	for width < len(line) && line[width] == ch {
		width++
	}
	// the block's last content line; the closing fence is the line after it
	rest := body[start+len(line):]
	if l := n.Lines(); l.Len() > 0 {
		rest = body[l.At(l.Len()-1).Stop:]
	}
	rest = bytes.TrimPrefix(rest, []byte("\n"))
	ln, _ := cutLine(rest)
	t := bytes.TrimLeft(ln, " ")
	if len(ln)-len(t) > 3 {
		return false
	}
	w := 0
	for w < len(t) && t[w] == ch {
		w++
	}
	return w >= width && len(bytes.Trim(t[w:], " \t\r")) == 0
}

// fillItem sets an item's end, text, line and marker prefix.
func (d *Doc) fillItem(it *Item, stop int) {
	it.End = stop
	it.Line = d.Line(it.Start)
	raw := d.src[it.Start:stop]
	first := raw
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	m := markerEnd(first)
	prefix := string(first[:m])
	if m == len(bytes.TrimRight(first, " \t\r")) || !strings.HasSuffix(prefix, " ") && !strings.HasSuffix(prefix, "\t") {
		prefix = strings.TrimRight(prefix, " \t") + " "
	}
	it.prefix = prefix
	lines := strings.Split(string(raw[m:]), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	it.Text = strings.TrimSpace(strings.Join(lines, "\n"))
}

// markerEnd is the length of a list item line's indentation, marker and the
// spaces after it.
func markerEnd(line []byte) int {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	switch {
	case i < len(line) && (line[i] == '-' || line[i] == '*' || line[i] == '+'):
		i++
	default:
		for i < len(line) && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i < len(line) && (line[i] == '.' || line[i] == ')') {
			i++
		}
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

func (d *Doc) buildSections() {
	var stack []int // indexes into d.sections
	for i, b := range d.blocks {
		if b.kind != kindHeading {
			continue
		}
		for len(stack) > 0 && d.sections[stack[len(stack)-1]].Level >= b.level {
			stack = stack[:len(stack)-1]
		}
		var path []string
		for _, j := range stack {
			path = append(path, d.sections[j].Heading)
		}
		s := Section{Heading: b.text, Path: append(path, b.text), Level: b.level, Start: b.start, End: len(d.src), bodyEnd: len(d.src)}
		s.headEnd = b.end
		for j := i + 1; j < len(d.blocks); j++ {
			nb := d.blocks[j]
			if nb.kind != kindHeading {
				if s.bodyEnd == len(d.src) && nb.kind == kindList {
					s.lists = append(s.lists, j)
					s.Items = append(s.Items, nb.items...)
				}
				continue
			}
			if s.bodyEnd == len(d.src) {
				s.bodyEnd = nb.start
			}
			if nb.level <= b.level {
				s.End = nb.start
				break
			}
		}
		s.StartLine = d.Line(s.Start)
		s.EndLine = d.Line(max(s.End-1, s.Start))
		if s.Items == nil {
			s.Items = []Item{}
		}
		stack = append(stack, len(d.sections))
		d.sections = append(d.sections, s)
	}
}

// Sections lists the headed sections in document order.
func (d *Doc) Sections() []Section { return d.sections }

// ReadTo is where strata stopped reading the file (MaxBlocks, MaxLines):
// no section or item is known from that offset on; len of the file when it
// was read whole.
func (d *Doc) ReadTo() int { return d.cut }

// Warnings lists what a reader should know: a code fence never closed, a
// heading repeated at the same path (the first MaxRepeatWarnings, then
// one line that counts the rest), lists nested past MaxNesting, the line
// where reading stopped (MaxBlocks, MaxLines).
func (d *Doc) Warnings() []Warning {
	out := append([]Warning{}, d.warnings...)
	seen := map[string]bool{}
	repeats, more := 0, Warning{}
	for _, s := range d.sections {
		k := strings.ToLower(strings.Join(s.Path, "\x00"))
		if seen[k] {
			if repeats++; repeats <= MaxRepeatWarnings {
				out = append(out, Warning{Line: s.StartLine, Message: fmt.Sprintf("heading %q repeats one at the same level; edits go to the first", s.Heading)})
			} else if more.Line == 0 {
				more.Line = s.StartLine
			}
		}
		seen[k] = true
	}
	if more.Line > 0 {
		more.Message = fmt.Sprintf("%d more headings from this line on repeat one at the same level; edits go to the first", repeats-MaxRepeatWarnings)
		out = append(out, more)
	}
	return out
}

// MaxRepeatWarnings is how many repeated headings Warnings names one by
// one; a file of thousands of "#" lines gets one more line, not thousands.
const MaxRepeatWarnings = 20

// Lines is the number of lines of the file (a final line without newline counts).
func (d *Doc) Lines() int {
	n := bytes.Count(d.src, []byte("\n"))
	if len(d.src) > 0 && d.src[len(d.src)-1] != '\n' {
		n++
	}
	return n
}

// Find returns the first section whose heading equals name (ignoring case
// and surrounding "#"s and spaces) at the given level (0: any level).
func (d *Doc) Find(name string, level int) *Section {
	name = CleanHeading(name)
	for i := range d.sections {
		s := &d.sections[i]
		if strings.EqualFold(s.Heading, name) && (level == 0 || s.Level == level) {
			return s
		}
	}
	return nil
}

// CleanHeading turns "## Workflow state" into "Workflow state".
func CleanHeading(name string) string {
	return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(name), "#"))
}

// Line is the 1-based line number of a byte offset.
func (d *Doc) Line(off int) int {
	off = min(off, len(d.src))
	if off > d.cut { // past where strata read (the end of a section that runs there): counted
		d.lineWork += off - d.cut
		return len(d.newlines) + bytes.Count(d.src[d.cut:off], []byte("\n")) + 1
	}
	return sort.SearchInts(d.newlines, off) + 1 // the newlines before off, plus one
}

// newlineIndex is the offsets of the "\n"s of src.
func newlineIndex(src []byte) []int {
	nl := make([]int, 0, bytes.Count(src, []byte("\n")))
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			return nl
		}
		nl = append(nl, i+j)
		i += j + 1
	}
}

func (d *Doc) lineStart(off int) int {
	return bytes.LastIndexByte(d.src[:off], '\n') + 1
}

// trimBlank moves p (a line start or the end of the file) back over blank
// lines, never before floor.
func (d *Doc) trimBlank(p, floor int) int {
	for p > floor {
		ls := d.lineStart(p - 1)
		if ls < floor || !blank(d.src[ls:p]) {
			break
		}
		p = ls
	}
	return p
}

func blank(b []byte) bool { return len(bytes.Trim(b, " \t\r\n")) == 0 }

// bodyStart skips a UTF-8 BOM and YAML front matter ("---" line, ..., "---" line).
func bodyStart(src []byte) int {
	off := 0
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		off = 3
	}
	rest := src[off:]
	first, ok := cutLine(rest)
	if !ok || strings.TrimRight(string(first), "\r") != "---" {
		return off
	}
	p := len(first) + 1
	for p < len(rest) {
		ln, ok := cutLine(rest[p:])
		if !ok {
			return off // no closing line: a thematic break, not front matter
		}
		if strings.TrimRight(string(ln), "\r") == "---" {
			return off + p + len(ln) + 1
		}
		p += len(ln) + 1
	}
	return off
}

// cutLine returns the first line of b without its "\n", and whether it had one.
func cutLine(b []byte) ([]byte, bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, false
	}
	return b[:i], true
}

// dominantEOL is "\r\n" when most lines end so, else "\n".
func dominantEOL(src []byte) string {
	crlf := bytes.Count(src, []byte("\r\n"))
	if crlf > bytes.Count(src, []byte("\n"))-crlf {
		return "\r\n"
	}
	return "\n"
}

// Normalize is how item texts are compared: runs of white space count as one space.
func Normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
