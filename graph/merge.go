package graph

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
)

// Lines-level edits for the merge of two versions of a graph file (package
// conflict): every line they do not touch keeps its bytes.

// EntityLines maps each entity name to its first line (without "\n"), the
// one the server's tools act on, for the lines that are well-formed
// entities.
func EntityLines(data []byte) map[string][]byte { return NewDoc(data).EntityLines() }

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
	lastOf := map[string]int{} // each key's last occurrence
	for i, m := range lms {
		lastOf[m.key] = i
	}
	set := func(key string, v []byte) { // replace the value of the last occurrence
		if i, ok := lastOf[key]; ok {
			edits = append(edits, edit{start: lms[i].vstart, end: lms[i].vend, text: v})
			return
		}
		closing := bytes.LastIndexByte(later, '}')
		add := appendJSString([]byte{','}, key)
		add = append(append(add, ':'), v...)
		edits = append(edits, edit{start: closing, end: closing, text: add})
	}
	gone := make([]bool, len(lms)) // the occurrences to remove
	remove := func(key string) {   // every occurrence
		for i, m := range lms {
			gone[i] = gone[i] || m.key == key
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
	noneStays := false
	// a removed member goes with the "," before it; the first member with
	// the removed ones after it and the "," before the next that stays
	for i := 0; i < len(lms); i++ {
		if !gone[i] {
			continue
		}
		if i > 0 {
			edits = append(edits, edit{start: lms[i].start, end: lms[i].vend})
			continue
		}
		j := 1
		for j < len(lms) && gone[j] {
			j++
		}
		switch {
		case j < len(lms):
			next := lms[j].start
			edits = append(edits, edit{start: lms[0].start, end: next + bytes.IndexByte(later[next:], ',') + 1})
		case len(lms) > 1: // none stays: a member added goes without its ","
			edits = append(edits, edit{start: lms[0].start, end: lms[len(lms)-1].vend})
			noneStays = true
		}
		i = j - 1
	}
	if len(edits) == 0 {
		return later, lost
	}
	// in one pass (the edits do not overlap); of two additions before the
	// closing brace the one made first goes first
	for i := range edits {
		edits[i].seq = i
	}
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].seq < edits[j].seq
	})
	out = make([]byte, 0, len(later))
	at := 0
	for _, e := range edits {
		if noneStays && e.start == e.end && len(e.text) > 0 && e.text[0] == ',' {
			e.text, noneStays = e.text[1:], false // the first member now
		}
		out = append(append(out, later[at:e.start]...), e.text...)
		at = e.end
	}
	return append(out, later[at:]...), lost
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
func Lines(data []byte) []LineInfo { return NewDoc(data).Lines() }

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
