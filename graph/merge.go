package graph

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
)

// Lines-level edits for the merge of two versions of a graph file (package
// conflict): every line they do not touch keeps its bytes.

// SetEntities replaces or adds entities as the server would keep them (see
// upsertLines) and returns the new content.
func SetEntities(data []byte, ents []Entity) []byte {
	out, _ := upsertLines(data, ents)
	return out
}

// DropEntities removes every entity line with one of the names.
func DropEntities(data []byte, names []string) []byte {
	out, _ := removeLines(data, names)
	return out
}

// AddRelations appends relation lines, written as the server's saveGraph
// writes them, after the last line.
func AddRelations(data []byte, rels []Relation) []byte {
	ls := splitLines(data)
	for _, r := range rels {
		ls = insertLine(ls, len(ls), renderRelation(r))
	}
	return joinLines(ls)
}

// DropRelations removes every relation line equal to one of rels.
func DropRelations(data []byte, rels []Relation) []byte {
	drop := map[Relation]bool{}
	for _, r := range rels {
		drop[r] = true
	}
	ls := splitLines(data)
	changed := false
	for i := len(ls) - 1; i >= 0; i-- {
		if len(bytes.TrimSpace(ls[i].text)) == 0 {
			continue
		}
		if p := parseLine(ls[i].text); p.relation != nil && drop[*p.relation] {
			ls = deleteLine(ls, i)
			changed = true
		}
	}
	if !changed {
		return data
	}
	return joinLines(ls)
}

// renderRelation writes r as JSON.stringify({type, from, to, relationType}).
func renderRelation(r Relation) []byte {
	b := []byte(`{"type":"relation","from":`)
	b = appendJSString(b, r.From)
	b = append(b, `,"to":`...)
	b = appendJSString(b, r.To)
	b = append(b, `,"relationType":`...)
	b = appendJSString(b, r.RelationType)
	return append(b, '}')
}

// EntityLines maps each entity name to its first line (without "\n"), the
// one the server's tools act on, for the lines that are well-formed
// entities.
func EntityLines(data []byte) map[string][]byte {
	out := map[string][]byte{}
	for _, l := range splitLines(data) {
		if p := parseLine(l.text); p.entity != nil {
			if _, ok := out[p.name]; !ok {
				out[p.name] = l.text
			}
		}
	}
	return out
}

// RelationLines maps each relation to its first line (without "\n").
func RelationLines(data []byte) map[Relation][]byte {
	out := map[Relation][]byte{}
	for _, l := range splitLines(data) {
		if len(bytes.TrimSpace(l.text)) == 0 {
			continue
		}
		if p := parseLine(l.text); p.relation != nil {
			if _, ok := out[*p.relation]; !ok {
				out[*p.relation] = l.text
			}
		}
	}
	return out
}

// ReplaceEntityLine replaces the first entity line of name with text,
// keeping every other line (later lines of the name too).
func ReplaceEntityLine(data []byte, name string, text []byte) []byte {
	ls := splitLines(data)
	for i, l := range ls {
		if p := parseLine(l.text); p.kind == "entity" && p.named && p.name == name {
			if bytes.Equal(l.text, text) {
				return data
			}
			ls[i].text = text
			return joinLines(ls)
		}
	}
	return data
}

// InsertEntityLine adds an entity line where upsertLines adds a new entity:
// after the last entity line, else before the first relation, else at the
// end.
func InsertEntityLine(data, text []byte) []byte {
	ls := splitLines(data)
	lastEntity, firstRelation := -1, -1
	for i, l := range ls {
		switch parseLine(l.text).kind {
		case "entity":
			lastEntity = i
		case "relation":
			if firstRelation < 0 {
				firstRelation = i
			}
		}
	}
	return joinLines(insertLine(ls, newEntityAt(len(ls), lastEntity, firstRelation), text))
}

// AddLines appends lines after the last line.
func AddLines(data []byte, texts [][]byte) []byte {
	ls := splitLines(data)
	for _, t := range texts {
		ls = insertLine(ls, len(ls), t)
	}
	return joinLines(ls)
}

// SameLine reports whether two JSON object lines hold the same members with
// the same values, whatever their order and spacing.
func SameLine(a, b []byte) bool {
	ma, oka := memberValues(a)
	mb, okb := memberValues(b)
	if !oka || !okb {
		return bytes.Equal(a, b)
	}
	if len(ma) != len(mb) {
		return false
	}
	for k, v := range ma {
		if w, ok := mb[k]; !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

// MemberLoss is a member of an entity or relation line both sides changed
// to different values: the later side's value was kept.
type MemberLoss struct {
	Key           string
	Earlier, Kept string // the values, as JSON; Earlier is "" when the earlier side removed it, Kept when the later side did
}

// MergeEntityLine merges the members of one entity's line that both sides
// changed since base (hasBase false: both added it): it starts from later's
// line, byte for byte, and applies each member the earlier side changed and
// the later did not (a new member goes before the closing brace, a removed
// one goes); a member both changed differently keeps the later value and is
// named in lost. The observations member becomes obs (written as the server
// writes it) when that differs from later's; "type" and "name" are never
// touched.
func MergeEntityLine(base, earlier, later []byte, hasBase bool, obs []string) (out []byte, lost []MemberLoss) {
	skip := func(k string) bool { return k == "type" || k == "name" || k == "observations" }
	return mergeLine(base, earlier, later, hasBase, skip, &obs)
}

// MergeRelationLine merges the members of one relation's line as
// MergeEntityLine does an entity's: "type", "from", "to" and "relationType"
// (what makes it the same relation) are never touched; the others (a
// "note", "createdAt", a fork's own) are merged member by member.
func MergeRelationLine(base, earlier, later []byte, hasBase bool) (out []byte, lost []MemberLoss) {
	skip := func(k string) bool { return k == "type" || k == "from" || k == "to" || k == "relationType" }
	return mergeLine(base, earlier, later, hasBase, skip, nil)
}

// mergeLine is MergeEntityLine over the members skip does not name; obs,
// when set, is the observations member to write.
func mergeLine(base, earlier, later []byte, hasBase bool, skip func(string) bool, obs *[]string) (out []byte, lost []MemberLoss) {
	bm, _ := memberValues(base)
	if !hasBase {
		bm = nil
	}
	em, eok := memberValues(earlier)
	lms, lok := members(later)
	if !eok || !lok {
		return later, nil
	}
	lm := map[string]json.RawMessage{}
	for _, m := range lms {
		lm[m.key] = later[m.vstart:m.vend]
	}
	type edit struct {
		start, end int
		text       []byte
		seq        int
	}
	var edits []edit
	set := func(key string, v []byte) { // replace the value of the last occurrence
		for i := len(lms) - 1; i >= 0; i-- {
			if lms[i].key == key {
				edits = append(edits, edit{start: lms[i].vstart, end: lms[i].vend, text: v})
				return
			}
		}
		closing := bytes.LastIndexByte(later, '}')
		add := appendJSString([]byte{','}, key)
		add = append(append(add, ':'), v...)
		edits = append(edits, edit{start: closing, end: closing, text: add})
	}
	remove := func(key string) { // every occurrence
		for i, m := range lms {
			if m.key != key {
				continue
			}
			if i > 0 {
				edits = append(edits, edit{start: m.start, end: m.vend})
			} else if len(lms) > 1 {
				next := lms[1].start
				edits = append(edits, edit{start: m.start, end: next + bytes.IndexByte(later[next:], ',') + 1})
			}
		}
	}
	for _, m := range orderedKeys(earlier) {
		if skip(m) {
			continue
		}
		ev := em[m]
		lv, inLater := lm[m]
		bv, inBase := bm[m]
		switch {
		case inLater && sameValue(ev, lv):
		case inBase && sameValue(bv, ev): // the earlier side left it
		case inBase && inLater && sameValue(bv, lv), !inBase && !inLater: // the later side left it
			set(m, ev)
		case !inLater:
			lost = append(lost, MemberLoss{Key: m, Earlier: string(ev)})
		default:
			lost = append(lost, MemberLoss{Key: m, Earlier: string(ev), Kept: string(lv)})
		}
	}
	removed := map[string]bool{}
	for _, m := range lms {
		if _, inEarlier := em[m.key]; inEarlier || skip(m.key) || removed[m.key] {
			continue
		}
		bv, inBase := bm[m.key]
		switch {
		case !inBase: // the later side added it
		case sameValue(bv, lm[m.key]):
			remove(m.key) // the earlier side removed it
		default: // removed on the earlier side, changed on the later
			lost = append(lost, MemberLoss{Key: m.key, Kept: string(lm[m.key])})
		}
		removed[m.key] = true
	}
	if lent := parseLine(later).entity; obs != nil && lent != nil && !slices.Equal(lent.Observations, *obs) {
		b := []byte{'['}
		for i, o := range *obs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSString(b, o)
		}
		set("observations", append(b, ']'))
	}
	if len(edits) == 0 {
		return later, lost
	}
	// from the end, so offsets stay good; of two additions before the
	// closing brace the one made later goes in first, to end up after
	for i := range edits {
		edits[i].seq = i
	}
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start > edits[j].start
		}
		return edits[i].seq > edits[j].seq
	})
	out = append([]byte{}, later...)
	for _, e := range edits {
		out = append(out[:e.start], append(append([]byte{}, e.text...), out[e.end:]...)...)
	}
	return out, lost
}

// member is one member of a JSON object line: start is where it begins
// (after the "{" or the previous value, so a "," before it is inside),
// [vstart, vend) its value.
type member struct {
	key                 string
	start, vstart, vend int
}

// members lists a JSON object's members in order, duplicates included.
func members(text []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		start := int(dec.InputOffset())
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := t.(string)
		if !ok {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		end := int(dec.InputOffset())
		out = append(out, member{key: key, start: start, vstart: end - len(raw), vend: end})
	}
	return out, true
}

// memberValues maps each key of a JSON object line to its value (the last
// occurrence, as JSON.parse keeps).
func memberValues(text []byte) (map[string]json.RawMessage, bool) {
	ms, ok := members(text)
	if !ok {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		out[m.key] = text[m.vstart:m.vend]
	}
	return out, true
}

// orderedKeys lists a JSON object line's keys in order, each once.
func orderedKeys(text []byte) []string {
	ms, _ := members(text)
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.key] {
			seen[m.key] = true
			out = append(out, m.key)
		}
	}
	return out
}

// sameValue compares two JSON values without regard to spacing.
func sameValue(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// LineInfo is one line of a graph file as a merge sees it.
type LineInfo struct {
	Text []byte // without its "\n"
	// Key is what the line is about: "e\x00" and the name for an entity line,
	// "r\x00" and from, to and relationType for a relation line, "" for any
	// other line (blank, malformed, another program's record).
	Key      string
	Name     string    // an entity line's name
	Relation *Relation // a relation line's relation
	First    bool      // the first line of its Key: the one the server's tools act on
}

// EntityKey and RelationKey are the LineInfo keys of an entity and a relation.
func EntityKey(name string) string { return "e\x00" + name }

// RelationKey: see EntityKey.
func RelationKey(r Relation) string {
	return "r\x00" + r.From + "\x00" + r.To + "\x00" + r.RelationType
}

// Lines lists data's lines ("\n" ends a line; a "\r" before it stays in Text).
func Lines(data []byte) []LineInfo {
	ls := splitLines(data)
	out := make([]LineInfo, len(ls))
	seen := map[string]bool{}
	for i, l := range ls {
		out[i].Text = l.text
		if len(bytes.TrimSpace(l.text)) == 0 {
			continue
		}
		switch p := parseShared(l.text); { // read only: the relation is copied
		case p.entity != nil:
			out[i].Key, out[i].Name = EntityKey(p.name), p.name
		case p.relation != nil:
			r := *p.relation
			out[i].Key, out[i].Relation = RelationKey(r), &r
		default:
			continue
		}
		out[i].First = !seen[out[i].Key]
		seen[out[i].Key] = true
	}
	return out
}

// ReplaceRelationLine replaces the first line of relation r with text,
// keeping every other line.
func ReplaceRelationLine(data []byte, r Relation, text []byte) []byte {
	ls := splitLines(data)
	for i, l := range ls {
		if len(bytes.TrimSpace(l.text)) == 0 {
			continue
		}
		if p := parseLine(l.text); p.relation != nil && *p.relation == r {
			if bytes.Equal(l.text, text) {
				return data
			}
			ls[i].text = text
			return joinLines(ls)
		}
	}
	return data
}

// InsertLineAt puts text before line at (at the end when at is the number
// of lines), as insertLine does.
func InsertLineAt(data []byte, at int, text []byte) []byte {
	ls := splitLines(data)
	return joinLines(insertLine(ls, min(max(at, 0), len(ls)), text))
}

// DeleteLineAt removes line i, as deleteLine does.
func DeleteLineAt(data []byte, i int) []byte {
	ls := splitLines(data)
	if i < 0 || i >= len(ls) {
		return data
	}
	return joinLines(deleteLine(ls, i))
}

// Ending is the line-ending convention of a file.
type Ending int

// The endings: none (no line ends in "\n"), every line in "\n" alone, every
// line in "\r\n", or some of each.
const (
	EndingNone Ending = iota
	EndingLF
	EndingCRLF
	EndingMixed
)

// EndingOf tells data's line endings.
func EndingOf(data []byte) Ending {
	crlf, lf := false, false
	for i, c := range data {
		if c == '\n' {
			if i > 0 && data[i-1] == '\r' {
				crlf = true
			} else {
				lf = true
			}
		}
	}
	switch {
	case crlf && lf:
		return EndingMixed
	case crlf:
		return EndingCRLF
	case lf:
		return EndingLF
	}
	return EndingNone
}

// WithEnding ends every line of data as e says (LF: the "\r"s before a
// "\n" go; CRLF: a "\n" without one gets a "\r"); EndingNone and
// EndingMixed leave data as it is. A line of a file in that ending already
// keeps its bytes. A last line without "\n" loses the "\r"s it ends with
// unless keepCR (the file it came from ended so).
func WithEnding(data []byte, e Ending, keepCR bool) []byte {
	if e != EndingLF && e != EndingCRLF {
		return data
	}
	ls := splitLines(data)
	changed := false
	for i, l := range ls {
		t := bytes.TrimRight(l.text, "\r")
		switch {
		case !l.nl && keepCR:
			continue
		case !l.nl || e == EndingLF:
		case len(t) < len(l.text):
			continue // a CRLF line
		default:
			t = append(t[:len(t):len(t)], '\r')
		}
		if !bytes.Equal(t, l.text) {
			ls[i].text = t
			changed = true
		}
	}
	if !changed {
		return data
	}
	return joinLines(ls)
}
