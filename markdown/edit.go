package markdown

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Line splicing. Every edit inserts or removes whole lines; these two rules
// make an insertion and the matching removal exact inverses, byte for byte:
//
//   - New lines end with the file's dominant line ending. Inserted at the end
//     of a file whose last line has no newline, they are instead preceded by
//     one (so that last line ends) and the last new line gets none: the file
//     keeps having no final newline.
//   - Removing lines that run to the end of such a file also removes the
//     line ending before them, so the line before becomes the unterminated
//     last line again.

// insertLines inserts lines at p (a line start, or the end of the file).
func insertLines(src []byte, p int, lines []string, eol string) []byte {
	joined := strings.Join(lines, eol)
	var ins string
	if p == len(src) && len(src) > 0 && src[len(src)-1] != '\n' {
		ins = eol + joined
	} else {
		ins = joined + eol
	}
	out := make([]byte, 0, len(src)+len(ins))
	out = append(out, src[:p]...)
	out = append(out, ins...)
	return append(out, src[p:]...)
}

// removeLines removes the lines in [a, b) (a a line start, b a line start
// or the end of the file).
func removeLines(src []byte, a, b int) []byte {
	a = cutStart(src, a, b)
	out := make([]byte, 0, len(src)-(b-a))
	out = append(out, src[:a]...)
	return append(out, src[b:]...)
}

// cutStart is where removing the lines [a, b) starts: a, or, when they run
// to the end of a file without a final newline, the line ending before a.
func cutStart(src []byte, a, b int) int {
	if b == len(src) && b > a && src[b-1] != '\n' && a > 0 && src[a-1] == '\n' {
		a--
		if a > 0 && src[a-1] == '\r' { // the whole line ending, whatever the file's dominant one
			a--
		}
	}
	return a
}

// itemLine makes text one line: line breaks become spaces.
func itemLine(text string) string {
	return Normalize(strings.NewReplacer("\r", " ", "\n", " ").Replace(text))
}

// AddItem adds "- TEXT" as the last item of the last bullet list under the
// heading (level 0: any level; a new heading is created at level 2). The new
// item copies the indentation and marker of the list's last item. A section
// without a bullet list gets a new list after its content, after a blank
// line unless the section is empty. A missing heading is created at the end
// of the file, after one blank line. It reports whether the file changed:
// an item with the same text (white space aside) is not added twice. Line
// breaks in text become spaces. When the result would not read back as that
// item in that section (the file ends inside an open code fence, say) it
// returns ErrUnsafe, or an *UnsafeError naming the cause, and src unchanged.
func AddItem(src []byte, heading string, level int, text string) ([]byte, bool, error) {
	text = itemLine(text)
	if text == "" {
		return src, false, nil
	}
	d, err := Parse(src)
	if err != nil {
		return src, false, err
	}
	var p int
	var lines []string
	s := d.Find(heading, level)
	if err := d.needs(s); err != nil {
		return src, false, err
	}
	if s != nil {
		for _, it := range s.Items {
			if Normalize(it.Text) == text {
				return src, false, nil
			}
		}
		if li := lastBullet(d, s); li >= 0 {
			b := d.blocks[li]
			last := b.items[len(b.items)-1]
			p, lines = last.End, []string{last.prefix + text}
		} else {
			p = d.trimBlank(s.bodyEnd, s.headEnd)
			lines = []string{"- " + text}
			if p > s.headEnd {
				lines = append([]string{""}, lines...)
			}
		}
		level = s.Level
	} else {
		if level <= 0 {
			level = 2
		}
		p = len(src)
		lines = []string{strings.Repeat("#", level) + " " + CleanHeading(heading), "- " + text}
		if len(src) > 0 {
			lines = append([]string{""}, lines...)
		}
	}
	if p == len(src) && len(src) > 0 && src[len(src)-1] == '\r' {
		return src, false, ErrUnsafe // a lone CR would join the new line ending into a CRLF
	}
	out := insertLines(src, p, lines, d.eol)
	if !has(out, heading, level, text) {
		if d.openFence > 0 {
			return src, false, &UnsafeError{Line: d.openFence, Reason: "code fence opened here is never closed, so a new item would read as code"}
		}
		return src, false, ErrUnsafe
	}
	return out, true, nil
}

// InsertItem adds "- TEXT" under the heading just before the first of its
// items for which before (given an item's text) is true, copying that
// item's indentation and marker; when none is, it is AddItem. As AddItem,
// it adds no item whose text is there already (white space aside) and
// reports whether the file changed. When the result would not read back
// as the section's items with the new one in that place and the others
// unchanged, it returns ErrUnsafe and src unchanged.
func InsertItem(src []byte, heading string, level int, text string, before func(text string) bool) ([]byte, bool, error) {
	text = itemLine(text)
	if text == "" {
		return src, false, nil
	}
	d, err := Parse(src)
	if err != nil {
		return src, false, err
	}
	s := d.Find(heading, level)
	if s == nil {
		return AddItem(src, heading, level, text)
	}
	if err := d.needs(s); err != nil {
		return src, false, err
	}
	at := -1
	for i, it := range s.Items {
		if Normalize(it.Text) == text {
			return src, false, nil
		}
		if at < 0 && before(it.Text) {
			at = i
		}
	}
	if at < 0 {
		return AddItem(src, heading, level, text)
	}
	anchor := s.Items[at]
	out := insertLines(src, anchor.Start, []string{anchor.prefix + text}, d.eol)
	want := make([]string, 0, len(s.Items)+1)
	for i, it := range s.Items {
		if i == at {
			want = append(want, text)
		}
		want = append(want, it.Text)
	}
	od, err := Parse(out)
	if err != nil {
		return src, false, ErrUnsafe
	}
	ns := od.Find(heading, level)
	if ns == nil || len(ns.Items) != len(want) {
		return src, false, ErrUnsafe
	}
	for i, it := range ns.Items {
		if it.Text != want[i] {
			return src, false, ErrUnsafe
		}
	}
	return out, true, nil
}

// has reports whether src reads back with an item of that text under the heading.
func has(src []byte, heading string, level int, text string) bool {
	d, err := Parse(src)
	if err != nil {
		return false
	}
	s := d.Find(heading, level)
	if s == nil {
		return false
	}
	for _, it := range s.Items {
		if it.Text == text {
			return true
		}
	}
	return false
}

func lastBullet(d *Doc, s *Section) int {
	for i := len(s.lists) - 1; i >= 0; i-- {
		if b := d.blocks[s.lists[i]]; b.bullet && len(b.items) > 0 {
			return s.lists[i]
		}
	}
	return -1
}

// RemoveItem removes the first item under the heading whose text equals
// text (white space aside), with its continuation lines. When it was the
// only item of its list, one blank line just before it goes too. It reports
// whether the file changed. AddItem followed by RemoveItem of the same text
// gives back the original bytes.
//
// The removal is checked as an insertion is: the file must read back with
// the same sections and items, less this one, and the same top-level
// blocks, of the same kinds, each where it was less the removed bytes.
// Lines that were apart can read differently once together: a paragraph
// over a "---" line becomes a heading; an HTML block that the blank line
// ended takes in the next section, block quote or code fence. When taking
// the blank line too would do that, the blank line stays; when taking the
// item's lines at all would, RemoveItem returns an *UnsafeError naming the
// item's line and wrapping ErrRereads, and src unchanged.
func RemoveItem(src []byte, heading string, level int, text string) ([]byte, bool, error) {
	text = itemLine(text)
	d, err := Parse(src)
	if err != nil {
		return src, false, err
	}
	s := d.Find(heading, level)
	if s == nil {
		return src, false, nil
	}
	if err := d.needs(s); err != nil {
		return src, false, err
	}
	for _, it := range s.Items {
		if Normalize(it.Text) == text {
			if out, _, ok := d.removeItem(it); ok {
				return out, true, nil
			}
			return src, false, changesReading(it)
		}
	}
	return src, false, nil
}

// changesReading is the refusal to remove it.
func changesReading(it Item) error {
	return &UnsafeError{Line: it.Line, Err: ErrRereads,
		Reason: "removing this item would change how the lines around it read (text becoming a heading, a section taken into an HTML block)"}
}

// removeItem removes it as RemoveItem does, from the file d was parsed
// from, and returns the result and its parse, or false when no removal
// reads back with the other sections and items unchanged.
func (d *Doc) removeItem(it Item) ([]byte, *Doc, bool) {
	gone := map[int]bool{it.Start: true}
	a := it.Start
	for _, b := range d.blocks {
		if b.kind == kindList && len(b.items) == 1 && b.items[0].Start == it.Start {
			a = d.blankBefore(a)
		}
	}
	if out, od, ok := d.removeChecked([][2]int{{a, it.End}}, gone); ok {
		return out, od, true
	}
	if a < it.Start { // the blank line may be what ends the block before
		return d.removeChecked([][2]int{{it.Start, it.End}}, gone)
	}
	return nil, nil, false
}

// removeChecked removes the line ranges cuts (in order, none touching
// another, each ending before d.cut) from d's file. It returns the result
// and its parse, and whether that reads back as d with the items starting
// at the offsets in gone taken out, up to where either parse stopped
// reading: every section's level, heading path and items' texts, in
// order, and every top-level block's kind and start (see layout).
func (d *Doc) removeChecked(cuts [][2]int, gone map[int]bool) ([]byte, *Doc, bool) {
	out := make([]byte, 0, len(d.src))
	removed := make([][2]int, 0, len(cuts)) // the byte ranges taken out
	prev := 0
	for _, c := range cuts { // only the last can run to the end of the file
		a := cutStart(d.src, c[0], c[1])
		out = append(out, d.src[prev:a]...)
		removed = append(removed, [2]int{a, c[1]})
		prev = c[1]
	}
	out = append(out, d.src[prev:]...)
	od, err := Parse(out)
	if err != nil {
		return out, nil, false
	}
	shift := len(d.src) - len(out) // the bytes after the cuts moved back by it
	limit := min(d.cut, od.cut+shift)
	return out, od, slices.Equal(d.outline(limit, gone), od.outline(limit-shift, nil)) &&
		slices.Equal(d.layout(limit, removed, gone), od.layout(limit-shift, nil, nil))
}

// shape is a top-level block (or a list's item) as layout compares it.
type shape struct {
	name  string
	level int // a heading's level, an HTML block's type
	start int
}

// layout is how the lines of d read, block by block, up to limit: each
// top-level block's kind and start, and each list's items' starts, as
// they would be with the byte ranges cut taken out (in order; an offset
// past one moves back by its length), less the items starting at an
// offset in skip; a list then starts at its first item left, and one with
// none left is gone. A block's end is where the next one starts, less
// blank lines, so the starts give the ends. Comparing it catches what the
// outline does not: a block quote or a code fence taken into an HTML
// block that the removed blank line ended.
func (d *Doc) layout(limit int, cut [][2]int, skip map[int]bool) []shape {
	gone := make([]int, len(cut)+1) // gone[i]: the bytes of the ranges before cut[i]
	for i, c := range cut {
		gone[i+1] = gone[i] + c[1] - c[0]
	}
	moved := func(p int) int {
		i := sort.Search(len(cut), func(i int) bool { return cut[i][0] > p }) // the ranges starting at or before p
		if i == 0 {
			return p
		}
		if c := cut[i-1]; p < c[1] { // inside c: where c was
			return c[0] - gone[i-1]
		}
		return p - gone[i]
	}
	var out []shape
	for _, b := range d.blocks {
		if b.start >= limit {
			break
		}
		if b.kind != kindList {
			out = append(out, shape{b.name, b.level + b.html, moved(b.start)})
			continue
		}
		list := len(out)
		out = append(out, shape{name: b.name})
		for _, it := range b.items {
			if !skip[it.Start] {
				out = append(out, shape{"item", 0, moved(it.Start)})
			}
		}
		if len(out) == list+1 { // a list with no item left is gone
			out = out[:list]
		} else { // and starts at its first item left
			out[list].start = out[list+1].start
		}
	}
	return out
}

// outline is what an edit of one section must leave as it was in the
// others: each section's level and heading path, then its items' texts,
// up to limit, less the items starting at an offset in skip.
func (d *Doc) outline(limit int, skip map[int]bool) []string {
	var out []string
	for _, s := range d.sections {
		if s.Start >= limit {
			break
		}
		out = append(out, fmt.Sprintf("%d %q", s.Level, s.Path))
		for _, it := range s.Items {
			if it.End > limit {
				break
			}
			if !skip[it.Start] {
				out = append(out, "- "+it.Text)
			}
		}
	}
	return out
}

// needs refuses an edit of section s (nil: a heading to add at the end of
// the file) when s runs into the part of the file past MaxBlocks or
// MaxLines, which strata did not read.
func (d *Doc) needs(s *Section) error {
	if d.cut == len(d.src) || s != nil && s.bodyEnd < len(d.src) {
		return nil
	}
	return &UnsafeError{Line: d.Line(d.cut), Reason: fmt.Sprintf("strata reads no further than this line (more than %s), and the edit needs what follows", d.over)}
}

// blankBefore moves a line start back over one blank line inside the body.
func (d *Doc) blankBefore(a int) int {
	if a <= d.body {
		return a
	}
	ls := d.lineStart(a - 1)
	if ls >= d.body && blank(d.src[ls:a]) {
		return ls
	}
	return a
}

// RemoveSection removes the first section with that heading: its heading,
// its content and its subsections. A section running to the end of the file
// also takes one blank line before it, so that AddItem creating a heading
// and RemoveSection of it give back the original bytes.
func RemoveSection(src []byte, heading string, level int) ([]byte, bool, error) {
	d, err := Parse(src)
	if err != nil {
		return src, false, err
	}
	s := d.Find(heading, level)
	if s == nil {
		return src, false, nil
	}
	if d.cut < len(src) && s.End == len(src) {
		return src, false, d.needs(nil)
	}
	a := s.Start
	if s.End == len(src) {
		a = d.blankBefore(a)
	}
	return removeLines(src, a, s.End), true, nil
}

// TrimSection keeps at most keep of the items under the heading for which
// match is true, removing the oldest (first) ones. Other items and lines
// are untouched. It returns the new bytes, how many items it removed, and
// the surplus items it left where they are (kept, as they were in src):
// those whose removal would change how the file reads, as RemoveItem
// checks it.
//
// The result is that of RemoveItem of the oldest surplus item, one after
// the other, worked out from one parse (a parse per item made a section of
// n protocol lines cost n², minutes for a few thousand): each item's lines
// go, and an item that is by then the only one left of its list also
// takes the blank line just before it, past the items removed before it.
// The result is parsed once more to check it; only when that finds the
// file reading differently are the items removed one at a time, each
// checked, at most trimTries of them.
func TrimSection(src []byte, heading string, level, keep int, match func(text string) bool) (out []byte, removed int, kept []Item, err error) {
	d, err := Parse(src)
	if err != nil {
		return src, 0, nil, err
	}
	s := d.Find(heading, level)
	if s == nil {
		return src, 0, nil, nil
	}
	if err := d.needs(s); err != nil {
		return src, 0, nil, err
	}
	var hits []Item
	for _, it := range s.Items {
		if match(it.Text) {
			hits = append(hits, it)
		}
	}
	if len(hits) <= keep {
		return src, 0, nil, nil
	}
	drop := hits[:len(hits)-keep]
	gone := make(map[int]bool, len(drop)) // item starts
	for _, it := range drop {
		gone[it.Start] = true
	}
	emptied := map[int]bool{} // the last item's start of each list whose items all go
	for _, b := range d.blocks {
		if b.kind == kindList && len(b.items) > 0 && allGone(b.items, gone) {
			emptied[b.items[len(b.items)-1].Start] = true
		}
	}
	var cuts [][2]int // line ranges, in order, none touching another
	for _, it := range drop {
		a := it.Start
		for len(cuts) > 0 && cuts[len(cuts)-1][1] == a { // a range removed before ends here
			a = cuts[len(cuts)-1][0]
			cuts = cuts[:len(cuts)-1]
		}
		if emptied[it.Start] { // removed in order, it is by then its list's only item
			if b := d.blankBefore(a); b < a {
				a = b
				for len(cuts) > 0 && cuts[len(cuts)-1][1] == a {
					a = cuts[len(cuts)-1][0]
					cuts = cuts[:len(cuts)-1]
				}
			}
		}
		cuts = append(cuts, [2]int{a, it.End})
	}
	if out, _, ok := d.removeChecked(cuts, gone); ok {
		return out, len(drop), nil, nil
	}
	return d.trimEach(drop, heading, level, match)
}

// trimTries is how many of the surplus items TrimSection removes one at a
// time, each with a parse to check it, when removing them all at once
// would change how the file reads; the rest stay for the next trim.
const trimTries = 16

// trimEach is TrimSection one item at a time: drop, the surplus items of
// d, oldest first, each removed from the file as the removals before it
// left it when that reads back unchanged, and else kept.
func (d *Doc) trimEach(drop []Item, heading string, level int, match func(text string) bool) ([]byte, int, []Item, error) {
	cur, removed := d, 0
	var kept []Item
	for _, orig := range drop[:min(len(drop), trimTries)] {
		// the item in cur: the kept ones come before it
		s := cur.Find(heading, level)
		if s == nil {
			break
		}
		var it *Item
		n := 0
		for i := range s.Items {
			if match(s.Items[i].Text) {
				if n == len(kept) {
					it = &s.Items[i]
					break
				}
				n++
			}
		}
		if it == nil || it.Text != orig.Text {
			break // read differently after all: leave the rest to the next trim
		}
		if _, od, ok := cur.removeItem(*it); ok {
			cur, removed = od, removed+1
		} else {
			kept = append(kept, orig)
		}
	}
	return cur.src, removed, kept, nil
}

func allGone(items []Item, gone map[int]bool) bool {
	for _, it := range items {
		if !gone[it.Start] {
			return false
		}
	}
	return true
}
