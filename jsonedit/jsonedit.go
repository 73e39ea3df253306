// Package jsonedit edits the members of a JSON object in place, at the top
// level (EditMembers) or nested under a path of keys (Append, Set, Delete,
// Filter): the values that change are replaced, new members and elements go
// before the closing bracket in the layout of the item before them, removed
// ones leave with their comma, and every other byte of the document (indentation, line
// endings, a byte order mark, key order, number and string spellings, the
// final newline or its absence) stays as it was. strata uses it to rewrite
// a user's state file from L3 (docs/contract.md §6) and to add its hooks
// and MCP server to Claude Code's settings files (§8). It depends on the
// standard library only.
package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// ErrNotObject is returned for a document that is not one JSON object.
var ErrNotObject = errors.New("not a JSON object")

// Edit sets one top-level member to Value, or removes it when Delete is set.
type Edit struct {
	Key    string
	Value  any
	Delete bool
}

// bom is the UTF-8 byte order mark, kept in front of the document.
var bom = []byte("\xef\xbb\xbf")

// member is one top-level member: [keyStart, keyEnd) its quoted key,
// [valStart, valEnd) its value; after is where the member before it ends
// (its value's end, or just after "{" for the first member).
type member struct {
	key                     string
	after, keyStart, keyEnd int
	valStart, valEnd        int
	raw                     []byte
}

// object is a parsed object (its members in order, duplicates included)
// or array (its elements, as members without keys), with the offsets of
// its brackets.
type object struct {
	open, close int // offsets of "{" and "}", or "[" and "]"
	members     []member
	array       bool
}

// EditMembers applies edits in order to the JSON object in data and
// returns the new document. A member set to a value it already holds (as
// decoded, so "caf\u00e9" holds "café" and 1.0 holds json.Number("1.0"))
// keeps its bytes; a set replaces the value of the key's last occurrence
// (the one decoders keep); a removal drops every occurrence. Values are
// encoded by encoding/json without HTML escaping. It returns ErrNotObject
// (wrapped) when data is not one JSON object, and an error for a value
// that cannot be encoded; data itself is never modified.
func EditMembers(data []byte, edits []Edit) ([]byte, error) {
	out := data
	for _, e := range edits {
		var err error
		if out, err = apply(out, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func apply(data []byte, e Edit) ([]byte, error) {
	o, err := parse(data)
	if err != nil {
		return nil, err
	}
	last := -1
	for i, m := range o.members {
		if m.key == e.Key {
			last = i
		}
	}
	if e.Delete {
		if last < 0 {
			return data, nil
		}
		for last >= 0 { // one at a time, from the end, each with the layout around it
			data = remove(data, o, last)
			if o, err = parse(data); err != nil {
				return nil, err
			}
			last = -1
			for i, m := range o.members {
				if m.key == e.Key {
					last = i
				}
			}
		}
		return data, nil
	}
	val, err := encode(e.Value)
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", e.Key, err)
	}
	if last >= 0 {
		m := o.members[last]
		if holds(m.raw, val) {
			return data, nil
		}
		return splice(data, m.valStart, m.valEnd, val), nil
	}
	key, err := encode(e.Key)
	if err != nil {
		return nil, err
	}
	return insert(data, o, key, val), nil
}

// parse locates the members of the object in data (after a byte order
// mark, if any); only white space may follow the closing brace.
func parse(data []byte) (object, error) {
	base := 0
	if bytes.HasPrefix(data, bom) {
		base = len(bom)
	}
	o, end, err := parseAt(data, base)
	if err != nil {
		return o, err
	}
	if o.array {
		return o, fmt.Errorf("%w: found [", ErrNotObject)
	}
	if len(bytes.TrimLeft(data[end:], " \t\r\n")) > 0 {
		return o, fmt.Errorf("%w: data after the closing brace", ErrNotObject)
	}
	return o, nil
}

// parseAt locates the items of the object or array that starts at data[at]
// (after white space) and returns it with the offset just past its closing
// bracket. An array's items have no key: keyStart = keyEnd = valStart.
func parseAt(data []byte, at int) (o object, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader(data[at:]))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil || (t != json.Delim('{') && t != json.Delim('[')) {
		return o, 0, fmt.Errorf("%w: %v", ErrNotObject, tokenErr(err, t))
	}
	o.array = t == json.Delim('[')
	o.open = at + int(dec.InputOffset()) - 1
	after := o.open + 1
	for dec.More() {
		keyStart, keyEnd, key := 0, 0, ""
		if !o.array {
			t, err := dec.Token()
			if err != nil {
				return o, 0, fmt.Errorf("%w: %v", ErrNotObject, err)
			}
			key, _ = t.(string)
			keyEnd = at + int(dec.InputOffset())
			// between the member before and the key there is only white
			// space and a comma: the key starts at the first quote
			keyStart = after + bytes.IndexByte(data[after:keyEnd], '"')
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return o, 0, fmt.Errorf("%w: %v", ErrNotObject, err)
		}
		end := at + int(dec.InputOffset())
		if o.array {
			keyStart, keyEnd = end-len(raw), end-len(raw)
		}
		o.members = append(o.members, member{key: key, after: after, keyStart: keyStart, keyEnd: keyEnd,
			valStart: end - len(raw), valEnd: end, raw: raw})
		after = end
	}
	if t, err := dec.Token(); err != nil || (t != json.Delim('}') && t != json.Delim(']')) {
		return o, 0, fmt.Errorf("%w: %v", ErrNotObject, tokenErr(err, t))
	}
	o.close = at + int(dec.InputOffset()) - 1
	return o, o.close + 1, nil
}

func tokenErr(err error, t json.Token) any {
	if err != nil {
		return err
	}
	return fmt.Sprintf("found %v", t)
}

// encode writes v as compact JSON without HTML escaping.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// holds reports whether the raw value decodes to the same value as val.
func holds(raw, val []byte) bool {
	a, errA := decode(raw)
	b, errB := decode(val)
	return errA == nil && errB == nil && reflect.DeepEqual(a, b)
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func splice(data []byte, start, end int, text []byte) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(text))
	out = append(out, data[:start]...)
	out = append(out, text...)
	return append(out, data[end:]...)
}

// remove drops member i: with the comma and white space before it when a
// member precedes it; as the first member, up to the next member's key
// (whose own leading white space then goes), or, alone, everything between
// the brackets, so the object or array reads {} or [].
func remove(data []byte, o object, i int) []byte {
	m := o.members[i]
	switch {
	case i > 0:
		return splice(data, m.after, m.valEnd, nil)
	case len(o.members) > 1:
		return splice(data, m.keyStart, o.members[1].keyStart, nil)
	default:
		return splice(data, o.open+1, o.close, nil)
	}
}

// insert adds a member (or, with a nil key, an array element) after the
// last one, in its layout: the white space before its key (a new line and
// its indentation, or a space) and the bytes between its key and value; a
// value that is an object or array is laid out as the value before it: over
// lines (as indented as the line it starts on) when that one is, or is a
// plain value on a line of its own; else on one line, with a space after
// each colon and comma when that one has them. In an empty object or array the item goes on a line of its own,
// indented one step (the document's first step, or two spaces) more than
// the line of the opening bracket, in the document's line ending; an empty
// one nested in a document written on one line takes the item on that line.
func insert(data []byte, o object, key, val []byte) []byte {
	eol := []byte("\n")
	if bytes.Contains(data, []byte("\r\n")) {
		eol = []byte("\r\n")
	}
	var b []byte
	if n := len(o.members); n > 0 {
		m := o.members[n-1]
		lead := data[m.after:m.keyStart]
		if i := bytes.IndexByte(lead, ','); i >= 0 {
			lead = lead[i+1:]
		}
		sep := data[m.keyEnd:m.valStart]
		if n == 1 && !bytes.ContainsAny(lead, "\n") {
			// one member on the line of "{": a space after the comma when
			// the member has a space after its colon
			if lead = nil; bytes.ContainsAny(sep, " ") {
				lead = []byte(" ")
			}
		}
		container := len(m.raw) > 0 && (m.raw[0] == '{' || m.raw[0] == '[')
		switch i := bytes.LastIndexByte(lead, '\n'); {
		case i >= 0 && (bytes.ContainsAny(m.raw, "\n") || !container):
			// over lines like the item before, or, when that one is a
			// plain value, as the lines the document is written in
			val = layOut(val, lead[i+1:], unit(data), eol)
		case bytes.Contains(m.raw, []byte(": ")) || bytes.Contains(m.raw, []byte(", ")):
			val = spaced(val) // the item before is on one line, written with spaces
		}
		b = append(b, ',')
		b = append(b, lead...)
		b = append(b, key...)
		if key != nil {
			b = append(b, sep...)
		}
		b = append(b, val...)
		return splice(data, m.valEnd, m.valEnd, b)
	}
	top := o.open == 0 || (o.open == len(bom) && bytes.HasPrefix(data, bom))
	if !top && !bytes.Contains(bytes.TrimRight(data, " \t\r\n"), []byte("\n")) {
		b = append(b, key...)
		if key != nil {
			b = append(b, ": "...)
			if !bytes.Contains(data, []byte(`": `)) {
				b = b[:len(b)-1]
			}
		}
		return splice(data, o.open+1, o.close, append(b, val...))
	}
	outer := lineIndent(data, o.open)
	inner := append(append([]byte{}, outer...), unit(data)...)
	b = append(b, eol...)
	b = append(b, inner...)
	b = append(b, key...)
	if key != nil {
		b = append(b, ": "...)
	}
	b = append(b, layOut(val, inner, unit(data), eol)...)
	if top && bytes.ContainsAny(data[o.open+1:o.close], "\n") {
		// the top-level object's own white space before "}" stays
		return splice(data, o.open+1, o.open+1, b)
	}
	b = append(b, eol...)
	b = append(b, outer...)
	return splice(data, o.open+1, o.close, b)
}

// layOut spreads a compact object or array over lines, each indented by
// prefix and a step for each level; other values come back as they are.
func layOut(val, prefix, step, eol []byte) []byte {
	if len(val) == 0 || (val[0] != '{' && val[0] != '[') {
		return val
	}
	var b bytes.Buffer
	if json.Indent(&b, val, string(prefix), string(step)) != nil {
		return val
	}
	return bytes.ReplaceAll(b.Bytes(), []byte("\n"), eol) // strings hold no raw line feed
}

// spaced writes compact JSON with a space after each colon and comma, as
// {"a": 1, "b": [2, 3]}.
func spaced(val []byte) []byte {
	var b []byte
	in, esc := false, false
	for _, c := range val {
		b = append(b, c)
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ':' || c == ','):
			b = append(b, ' ')
		}
	}
	return b
}

// unit is the document's indentation step: the white space before the
// first top-level member when it is on a line of its own, else two spaces.
func unit(data []byte) []byte {
	if o, err := parse(data); err == nil && len(o.members) > 0 {
		m := o.members[0]
		lead := data[m.after:m.keyStart]
		if i := bytes.LastIndexByte(lead, '\n'); i >= 0 && i < len(lead)-1 {
			return lead[i+1:]
		}
	}
	return []byte("  ")
}

// lineIndent is the white space that starts the line holding data[at].
func lineIndent(data []byte, at int) []byte {
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	end := start
	for end < at && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return data[start:end]
}

// Kind names the JSON type of a value for messages ("an object", "a
// string", ..., "nothing" for none, "invalid JSON" for what is not one).
func Kind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "a number"
	}
	return "invalid JSON"
}
