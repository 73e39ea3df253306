package graph

import (
	"bytes"
	"slices"
)

// Doc is a graph file's lines while a merge edits many of them (package
// conflict). The file is split once and each line parsed once; an entity's
// or relation's first line is found through an index, and a batch of
// deletions or of new entity lines is one pass over the lines. The merge
// used to split, parse and join the whole file again after each line it
// changed, so two sides' edits of a 4 000-line graph took seconds, and a
// remote could make a sync pay the square of its lines. Every line no edit
// touches keeps its bytes; each edit does exactly what the one-line
// functions of merge.go do to the file.
type Doc struct {
	ls   []line
	ps   []parsed         // parseShared of each line: read only
	ents map[string]int   // the first line of type "entity" with a string name, by name; nil: to build
	rels map[Relation]int // the first relation line, by relation; nil: to build
}

// NewDoc splits data into lines and parses each (not through parseCache:
// the lines of a whole file would only push out the lines kept there).
func NewDoc(data []byte) *Doc {
	d := &Doc{ls: splitLines(data)}
	d.ps = make([]parsed, len(d.ls))
	for i, l := range d.ls {
		d.ps[i] = parseText(l.text)
	}
	return d
}

// Graph is what the lines hold, as Parse reads it.
func (d *Doc) Graph() *Graph {
	g := &Graph{own: map[string]Entity{}}
	for i, p := range d.ps {
		_, seen := g.own[p.name]
		switch {
		case len(bytes.TrimSpace(d.ls[i].text)) == 0:
		case p.entity != nil:
			e := *p.entity
			e.Observations = slices.Clone(e.Observations)
			g.Entities = append(g.Entities, e)
			if !seen {
				g.own[p.name] = e // its observations shared with Entities, as Entity gave them before
			}
		case p.relation != nil:
			g.Relations = append(g.Relations, *p.relation)
		default:
			g.Skipped++
			if p.own != nil && !seen {
				e := *p.own
				e.Observations = slices.Clone(e.Observations)
				g.own[p.name] = e
			}
		}
	}
	return g
}

// EntityLines maps each entity name to its first line, as EntityLines does.
func (d *Doc) EntityLines() map[string][]byte {
	out := map[string][]byte{}
	for i, p := range d.ps {
		if _, ok := out[p.name]; p.entity != nil && !ok {
			out[p.name] = d.ls[i].text
		}
	}
	return out
}

// RelationLines maps each relation to its first line, as RelationLines does.
func (d *Doc) RelationLines() map[Relation][]byte {
	out := map[Relation][]byte{}
	for i, p := range d.ps {
		if p.relation == nil {
			continue
		}
		if _, ok := out[*p.relation]; !ok {
			out[*p.relation] = d.ls[i].text
		}
	}
	return out
}

// Bytes is the file the lines make.
func (d *Doc) Bytes() []byte { return joinLines(d.ls) }

// Len is the number of lines.
func (d *Doc) Len() int { return len(d.ls) }

// Lines lists the lines as Lines does.
func (d *Doc) Lines() []LineInfo {
	out := make([]LineInfo, len(d.ls))
	seen := map[string]bool{}
	for i := range d.ls {
		out[i] = d.info(i)
		if out[i].Key != "" {
			out[i].First = !seen[out[i].Key]
			seen[out[i].Key] = true
		}
	}
	return out
}

// Info is line i as Lines gives it, except First, which depends on the
// lines before it (false here).
func (d *Doc) Info(i int) LineInfo { return d.info(i) }

func (d *Doc) info(i int) LineInfo { return lineInfo(d.ls[i].text, d.ps[i]) }

// lineInfo is a line of text, parsed as p, as Lines gives it (First aside).
func lineInfo(text []byte, p parsed) LineInfo {
	li := LineInfo{Text: text}
	switch {
	case p.entity != nil:
		li.Key, li.Name = EntityKey(p.name), p.name
	case p.relation != nil:
		r := *p.relation
		li.Key, li.Relation = RelationKey(r), &r
	}
	return li
}

// set makes line i's bytes text, and drops an index the change makes wrong.
func (d *Doc) set(i int, text []byte) {
	old := d.ps[i]
	d.ls[i].text = text
	d.ps[i] = parseShared(text)
	p := d.ps[i]
	if p.kind != old.kind || p.named != old.named || p.name != old.name {
		d.ents = nil
	}
	if (p.relation == nil) != (old.relation == nil) || p.relation != nil && *p.relation != *old.relation {
		d.rels = nil
	}
}

// SetEntityLine replaces the first entity line of name with text, keeping
// every other line (ReplaceEntityLine).
func (d *Doc) SetEntityLine(name string, text []byte) {
	if d.ents == nil {
		d.ents = map[string]int{}
		for i, p := range d.ps {
			if _, ok := d.ents[p.name]; p.kind == "entity" && p.named && !ok {
				d.ents[p.name] = i
			}
		}
	}
	if i, ok := d.ents[name]; ok && !bytes.Equal(d.ls[i].text, text) {
		d.set(i, text)
	}
}

// SetRelationLine replaces the first line of relation r with text, keeping
// every other line (ReplaceRelationLine).
func (d *Doc) SetRelationLine(r Relation, text []byte) {
	if d.rels == nil {
		d.rels = map[Relation]int{}
		for i, p := range d.ps {
			if p.relation == nil {
				continue
			}
			if _, ok := d.rels[*p.relation]; !ok {
				d.rels[*p.relation] = i
			}
		}
	}
	if i, ok := d.rels[r]; ok && !bytes.Equal(d.ls[i].text, text) {
		d.set(i, text)
	}
}

// AddEntityLines adds entity lines, in order, where InsertEntityLine adds
// each: after the last entity line (so each after the one before), else
// before the first relation, else at the end.
func (d *Doc) AddEntityLines(texts [][]byte) {
	if len(texts) == 0 {
		return
	}
	lastEntity, firstRelation := -1, -1
	for i, p := range d.ps {
		switch p.kind {
		case "entity":
			lastEntity = i
		case "relation":
			if firstRelation < 0 {
				firstRelation = i
			}
		}
	}
	d.insertBlock(newEntityAt(len(d.ls), lastEntity, firstRelation), texts)
}

// AppendLines adds lines after the last line (AddLines).
func (d *Doc) AppendLines(texts [][]byte) {
	if len(texts) > 0 {
		d.insertBlock(len(d.ls), texts)
	}
}

// InsertLineAt puts text before line at (at the end when at is Len), as
// insertLine does.
func (d *Doc) InsertLineAt(at int, text []byte) {
	d.insertBlock(min(max(at, 0), len(d.ls)), [][]byte{text})
}

// insertBlock puts texts before line at, one after the other, each exactly
// as insertLine would put it there after the one before.
func (d *Doc) insertBlock(at int, texts [][]byte) {
	defer func() { d.ents, d.rels = nil, nil }()
	if at == len(d.ls) { // at the end: insertLine is an append there
		for _, t := range texts {
			d.ls = insertLine(d.ls, len(d.ls), t)
			d.ps = append(d.ps, parseShared(d.ls[len(d.ls)-1].text))
			if n := len(d.ls); n > 1 {
				d.ps[n-2] = parseShared(d.ls[n-2].text) // it may have gained a "\r"
			}
		}
		return
	}
	// Before line at, every line ends in "\n" (only the last may not), so
	// what insertLine makes of each text depends only on the line just
	// before at and line at itself: do it on those two, then splice.
	var ctx []line
	if at > 0 {
		ctx = append(ctx, d.ls[at-1])
	}
	from := len(ctx)
	ctx = append(ctx, d.ls[at])
	for k, t := range texts {
		ctx = insertLine(ctx, from+k, t)
	}
	mid := ctx[from : from+len(texts)]
	ps := make([]parsed, len(mid))
	for i, l := range mid {
		ps[i] = parseShared(l.text)
	}
	d.ls = append(d.ls[:at], append(mid, d.ls[at:]...)...)
	d.ps = append(d.ps[:at], append(ps, d.ps[at:]...)...)
}

// DropEntities removes every entity line with one of the names
// (DropEntities on bytes).
func (d *Doc) DropEntities(names []string) {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	del := make([]bool, len(d.ls))
	for i, p := range d.ps {
		del[i] = p.kind == "entity" && p.named && drop[p.name]
	}
	d.deleteMarked(del)
}

// DropRelations removes every relation line equal to one of rels
// (DropRelations on bytes).
func (d *Doc) DropRelations(rels []Relation) {
	drop := map[Relation]bool{}
	for _, r := range rels {
		drop[r] = true
	}
	del := make([]bool, len(d.ls))
	for i, p := range d.ps {
		del[i] = p.relation != nil && drop[*p.relation]
	}
	d.deleteMarked(del)
}

// DeleteLines removes the lines whose indexes are given.
func (d *Doc) DeleteLines(idx []int) {
	del := make([]bool, len(d.ls))
	for _, i := range idx {
		if i >= 0 && i < len(del) {
			del[i] = true
		}
	}
	d.deleteMarked(del)
}

// deleteMarked removes the lines del marks, exactly as deleteLine would one
// at a time from the last: only the deletion of a line that is then the
// last line does more than drop it (the line before may take over its
// missing final newline), so those are done one by one and the rest
// dropped in one pass.
func (d *Doc) deleteMarked(del []bool) {
	changed := false
	for n := len(d.ls); n > 0 && del[n-1]; n = len(d.ls) {
		d.ls = deleteLine(d.ls, n-1)
		d.ps = d.ps[:n-1]
		if n > 1 {
			d.ps[n-2] = parseShared(d.ls[n-2].text)
		}
		changed = true
	}
	j := 0
	for i := range d.ls {
		if !del[i] {
			d.ls[j], d.ps[j] = d.ls[i], d.ps[i]
			j++
		}
	}
	if changed || j < len(d.ls) {
		d.ls, d.ps = d.ls[:j], d.ps[:j]
		d.ents, d.rels = nil, nil
	}
}

// Unterminated reports whether the file the lines make ends without a
// final newline.
func (d *Doc) Unterminated() bool {
	n := len(d.ls)
	return n > 0 && !d.ls[n-1].nl && len(d.ls[n-1].text) > 0
}

// Chain is a Doc's lines as a linked list, for placing many lines one at a
// time (each where a search of the lines puts it): a line goes in at a cost
// that does not grow with the file, where a slice would move every line
// after it. Close puts the lines back into the Doc.
type Chain struct {
	d          *Doc
	head, tail *Node
	keys       map[string]bool // the keys of the lines
}

// Node is one line of a Chain. Info is the line as Lines gives it, Text
// kept current.
type Node struct {
	Info       LineInfo
	l          line
	p          parsed
	prev, next *Node
}

// Next is the line after n (nil after the last).
func (n *Node) Next() *Node { return n.next }

// Chain lists the lines; the Doc is not to be used until Close.
func (d *Doc) Chain() *Chain {
	c := &Chain{d: d, keys: map[string]bool{}}
	for i, li := range d.Lines() {
		n := &Node{Info: li, l: d.ls[i], p: d.ps[i], prev: c.tail}
		if c.tail == nil {
			c.head = n
		} else {
			c.tail.next = n
		}
		c.tail = n
		c.keys[li.Key] = true
	}
	return c
}

// Front is the first line (nil when there is none).
func (c *Chain) Front() *Node { return c.head }

// Unterminated reports whether the lines end without a final newline.
func (c *Chain) Unterminated() bool {
	return c.tail != nil && !c.tail.l.nl && len(c.tail.l.text) > 0
}

// InsertBefore puts text before line at (at the end when at is nil)
// exactly as insertLine does. The new line is the first of its key when no
// line of the key was there: the caller never puts a line before the first
// of its key.
func (c *Chain) InsertBefore(at *Node, text []byte) *Node {
	// crlfAt: only the last line may lack a "\n", so the nearest line
	// before with one is at most two back, and without one before, the
	// nearest after is at most two on
	prev := c.tail
	if at != nil {
		prev = at.prev
	}
	crlf, found := false, false
	for p, k := prev, 0; p != nil && k < 2 && !found; p, k = p.prev, k+1 {
		if p.l.nl {
			crlf, found = bytes.HasSuffix(p.l.text, []byte("\r")), true
		}
	}
	for q, k := at, 0; q != nil && k < 2 && !found; q, k = q.next, k+1 {
		if q.l.nl {
			crlf, found = bytes.HasSuffix(q.l.text, []byte("\r")), true
		}
	}
	nl := true
	if at == nil && prev != nil && !prev.l.nl {
		prev.l.nl = true
		if crlf {
			prev.l.text = append(prev.l.text[:len(prev.l.text):len(prev.l.text)], '\r')
			prev.Info.Text = prev.l.text
		}
		nl = false
	}
	if crlf && nl && !bytes.HasSuffix(text, []byte("\r")) {
		text = append(text[:len(text):len(text)], '\r')
	}
	n := &Node{l: line{text: text, nl: nl}, p: parseShared(text), prev: prev, next: at}
	n.Info = lineInfo(text, n.p)
	n.Info.First = n.Info.Key != "" && !c.keys[n.Info.Key]
	c.keys[n.Info.Key] = true
	if prev == nil {
		c.head = n
	} else {
		prev.next = n
	}
	if at == nil {
		c.tail = n
	} else {
		at.prev = n
	}
	return n
}

// Close puts the lines back into the Doc.
func (c *Chain) Close() {
	c.d.ls, c.d.ps = c.d.ls[:0], c.d.ps[:0]
	for n := c.head; n != nil; n = n.next {
		c.d.ls = append(c.d.ls, n.l)
		c.d.ps = append(c.d.ps, n.p)
	}
	c.d.ents, c.d.rels = nil, nil
}

// Last is the last line (nil when there is none).
func (c *Chain) Last() *Node { return c.tail }
