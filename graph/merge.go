package graph

import "bytes"

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
