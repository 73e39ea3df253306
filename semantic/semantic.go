// Package semantic reads kept files as structures rather than lines, for
// `strata blame` and `strata diff --keys`: JSON and YAML as trees of JSON
// Pointers (object key order and whitespace do not matter), the MCP memory
// graph as entities and their observations, MEMORY.md as sections and their
// lines. It is pure: versions in, answers out.
package semantic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/markdown"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Kind is how a file is read.
type Kind int

const (
	KindTree   Kind = iota // JSON or YAML
	KindGraph              // MCP memory JSONL
	KindMemory             // MEMORY.md
)

// KindOf says how a kept file of class c at path is read; ok is false when
// it has no structure strata reads (a file of the user's own format).
func KindOf(path string, c state.Class) (Kind, bool) {
	switch {
	case c == state.ClassGraph:
		return KindGraph, true
	case c == state.ClassMemory:
		return KindMemory, true
	case validate.FormatOf(path) == validate.FormatJSON, validate.FormatOf(path) == validate.FormatYAML:
		return KindTree, true
	}
	return 0, false
}

// Decode reads a JSON or YAML document; a document that does not parse is
// its problems.
func Decode(path string, data []byte) (any, error) {
	var v any
	var ps state.Problems
	if validate.FormatOf(path) == validate.FormatYAML {
		v, ps = validate.DecodeYAML(path, data)
	} else {
		v, ps = validate.DecodeJSON(path, data)
	}
	if ps.Invalid() {
		return nil, ps
	}
	return v, nil
}

// Escape is one JSON Pointer reference token (RFC 6901).
func Escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// unescape turns a JSON Pointer reference token back into its key.
func unescape(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// decodeFor is Decode building, for JSON, only what want names (the whole
// document for YAML): leafAt gives the same answer on it as on Decode's for
// each pointer want was made of (wantOf), and it fails where Decode fails.
func decodeFor(path string, data []byte, want *validate.Want) (any, error) {
	if validate.FormatOf(path) == validate.FormatYAML {
		return Decode(path, data)
	}
	v, ps := validate.DecodeJSONFor(path, data, want)
	if ps.Invalid() {
		return nil, ps
	}
	return v, nil
}

// wantOf is what leafAt reads of a document for the pointers the sets
// yield: the members and elements along each, and the whole value each ends
// at.
func wantOf(sets ...iter.Seq[string]) *validate.Want {
	root := &validate.Want{}
	for _, set := range sets {
		for ptr := range set {
			w := root
			for ptr != "" && !w.All {
				tok, rest, ok := nextToken(ptr)
				if !ok {
					break // leafAt finds nothing there
				}
				ptr = rest
				key := unescape(tok)
				c := w.Keys[key]
				if c == nil {
					c = &validate.Want{}
					if w.Keys == nil {
						w.Keys = map[string]*validate.Want{}
					}
					w.Keys[key] = c
				}
				if i, ok := arrayIndex(tok); ok {
					if w.Elems == nil {
						w.Elems = map[int]*validate.Want{}
					}
					w.Elems[i] = c
				}
				w = c
			}
			if ptr == "" {
				w.All = true
			}
		}
	}
	return root
}

// nextToken splits a non-empty JSON Pointer into its first reference token
// (still escaped) and the rest; ok is false when ptr does not start with /.
func nextToken(ptr string) (tok, rest string, ok bool) {
	if ptr[0] != '/' {
		return "", "", false
	}
	tok = ptr[1:]
	if i := strings.IndexByte(tok, '/'); i >= 0 {
		return tok[:i], tok[i:], true
	}
	return tok, "", true
}

// arrayIndex is the array index a reference token names: its canonical
// decimal form only ("01" and "+1" name none), as Leaves writes indexes.
func arrayIndex(tok string) (int, bool) {
	i, err := strconv.Atoi(tok)
	return i, err == nil && i >= 0 && strconv.Itoa(i) == tok
}

// leafAt is what Leaves(v) holds at ptr, looked up without flattening all of
// v: ok is false where v has no leaf at ptr (nothing there, or a container
// that is not empty).
func leafAt(v any, ptr string) (string, bool) {
	for ptr != "" {
		tok, rest, ok := nextToken(ptr)
		if !ok {
			return "", false
		}
		ptr = rest
		switch x := v.(type) {
		case map[string]any:
			c, ok := x[unescape(tok)]
			if !ok {
				return "", false
			}
			v = c
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "{}", true
		}
		return "", false
	case []any:
		if len(x) == 0 {
			return "[]", true
		}
		return "", false
	}
	return Compact(v), true
}

// Leaves flattens a document into its leaves: the pointer of every scalar,
// empty object and empty array, with its value in compact JSON.
func Leaves(v any) map[string]string {
	out := map[string]string{}
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out[ptr] = "{}"
			}
			for k, c := range x {
				walk(ptr+"/"+Escape(k), c)
			}
		case []any:
			if len(x) == 0 {
				out[ptr] = "[]"
			}
			for i, c := range x {
				walk(ptr+"/"+strconv.Itoa(i), c)
			}
		default:
			out[ptr] = Compact(x)
		}
	}
	walk("", v)
	return out
}

// Compact is a value in compact JSON, keys sorted.
func Compact(v any) string {
	switch x := v.(type) { // the common scalars without an encoder
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return string(x)
	case string:
		if plain(x) {
			return `"` + x + `"`
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// plain reports whether s needs no escaping in JSON (and none of the HTML
// characters encoding/json would escape by default).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}

// graphItem is one line of a graph file read as a keyed item.
type graphLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	RelationType string   `json:"relationType"`
}

// graphEntity is an entity with its observations, or a relation (no
// observations).
type graphEntity struct {
	Key          string // "entity NAME" or "relation FROM -TYPE-> TO"
	Observations []string
}

// readGraph reads the entities and relations of a graph file, in file
// order; lines it cannot read are skipped.
func readGraph(data []byte) []graphEntity {
	var out []graphEntity
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var l graphLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch l.Type {
		case "entity":
			out = append(out, graphEntity{Key: "entity " + l.Name, Observations: l.Observations})
		case "relation":
			out = append(out, graphEntity{Key: fmt.Sprintf("relation %s -%s-> %s", l.From, l.RelationType, l.To)})
		}
	}
	return out
}

// GraphItems are a graph file's blame keys: each observation of each
// entity, and each relation.
func GraphItems(data []byte) map[string]string {
	out := map[string]string{}
	for _, e := range readGraph(data) {
		if strings.HasPrefix(e.Key, "relation ") {
			out[e.Key] = ""
		}
		for _, o := range e.Observations {
			out[e.Key+": "+Compact(o)] = ""
		}
	}
	return out
}

// section is one MEMORY.md section: its heading path and its lines.
type section struct {
	Key   string
	Lines []string
}

// readSections splits MEMORY.md into its sections, in file order; the text
// before the first heading is the section "(top)".
func readSections(data []byte) []section {
	d, err := markdown.Parse(data)
	if err != nil {
		return nil
	}
	var out []section
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	first := len(lines) + 1
	for _, s := range d.Sections() {
		first = min(first, s.StartLine)
	}
	secs := d.Sections()
	// past where strata reads the file (markdown.MaxBlocks, MaxLines) no
	// section is known: its lines are one section of their own, not the
	// last one read's (attack35d L1: a change 90 000 lines on was filed
	// under the last section read)
	unread := len(lines)
	if d.ReadTo() < len(data) {
		unread = d.Line(d.ReadTo()) - 1
	}
	if first > 1 {
		out = append(out, section{Key: "(top)", Lines: nonBlank(lines[:min(first-1, unread)])})
	}
	for i, s := range secs {
		end := unread
		if i+1 < len(secs) {
			end = secs[i+1].StartLine - 1
		}
		body := []string{}
		if s.StartLine < end {
			body = nonBlank(lines[s.StartLine:min(end, len(lines))])
		}
		out = append(out, section{Key: strings.Repeat("#", s.Level) + " " + strings.Join(s.Path, " > "), Lines: body})
	}
	if unread < len(lines) {
		out = append(out, section{Key: fmt.Sprintf("(from line %d: not read as sections, past %d blocks or lines)", unread+1, markdown.MaxLines), Lines: nonBlank(lines[unread:])})
	}
	return out
}

func nonBlank(ls []string) []string {
	out := []string{}
	for _, l := range ls {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
