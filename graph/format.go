// Package graph reads and edits the L3 layer: the JSONL knowledge graph of
// the MCP reference memory server (@modelcontextprotocol/server-memory). It
// upserts strata's own entities while keeping every other line of the file
// byte for byte, writes new lines exactly as the server's JSON.stringify
// would, and shares the file with a running server that takes no lock
// (docs in Upsert). It depends on the standard library and package
// jsonedit only.
package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/strata-dev/strata/jsonedit"
)

// Entity is one node of the graph, as the server keeps it.
type Entity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

// Relation is one edge of the graph.
type Relation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// Value returns the value of the last "key: value" observation of e. The
// server's add_observations appends, so the last occurrence is the newest.
func (e Entity) Value(key string) (string, bool) {
	prefix := key + ": "
	for i := len(e.Observations) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(e.Observations[i], prefix); ok {
			return v, true
		}
	}
	return "", false
}

// Updated returns the time of e's last "updated: <RFC 3339>" observation.
func (e Entity) Updated() (time.Time, bool) {
	v, ok := e.Value("updated")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	return t, err == nil
}

// Graph is the content of a graph file as the server reads it.
type Graph struct {
	Entities  []Entity   // in file order; the server's tools act on the first of a name
	Relations []Relation // in file order
	Skipped   int        // non-blank lines that are not a well-formed entity or relation
	// own is, by name, the first entity line with an observations array,
	// its string observations only (a fork's {text, timestamp} objects
	// left out): the line Upsert edits. nil: look in Entities.
	own map[string]Entity
}

// Entity returns the first entity with that name, as the server's tools
// find it and Upsert edits it: the first line of the name whose
// observations are an array, with its string observations (a line that
// also holds a fork's object observations counts, its objects left out).
func (g *Graph) Entity(name string) (Entity, bool) {
	if g.own != nil {
		e, ok := g.own[name]
		return e, ok
	}
	for _, e := range g.Entities {
		if e.Name == name {
			return e, true
		}
	}
	return Entity{}, false
}

// Parse reads graph file content. It never fails: lines that are not a
// well-formed entity or relation (other programs' records, fork formats with
// non-string observations, malformed JSON) are counted in Skipped.
func Parse(data []byte) *Graph { return NewDoc(data).Graph() }

// line is one line of the file: its bytes without the "\n" that ends it, and
// whether that "\n" is there (only the last line may lack it).
type line struct {
	text []byte
	nl   bool
}

// splitLines splits on "\n" only, as the server does; a "\r" stays in text.
func splitLines(data []byte) []line {
	var out []line
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, line{text: data})
			break
		}
		out = append(out, line{text: data[:i], nl: true})
		data = data[i+1:]
	}
	return out
}

func joinLines(ls []line) []byte {
	n := 0
	for _, l := range ls {
		n += len(l.text) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range ls {
		out = append(out, l.text...)
		if l.nl {
			out = append(out, '\n')
		}
	}
	return out
}

// parsed is what one line holds. kind is the line's "type" member when the
// line is a JSON object with a string "type"; name its string "name". entity
// and relation are set only when the line is exactly readable by the server
// as one (all required members present with the right types).
type parsed struct {
	kind     string
	name     string
	named    bool // the line has a string "name"
	entity   *Entity
	relation *Relation
	// own is set on an entity line with a string name and an array of
	// observations: its string observations (others left out) and its
	// entityType when that is a string. It is the entity when that is set.
	own *Entity
}

// parseLine is parseText, remembered by the line's bytes (parseCache):
// upsertLines reads every line once for each entity it writes, and the
// lines a Doc edits are parsed again. Each caller gets its own copy.
func parseLine(text []byte) parsed { return parseShared(text).clone() }

// parseShared is parseLine without the copy: the Entity and Relation it
// gives may be another caller's too, and must not be changed.
func parseShared(text []byte) parsed {
	if len(text) > maxCachedLine {
		return parseText(text)
	}
	parseCache.Lock()
	p, ok := parseCache.lines[string(text)]
	parseCache.Unlock()
	if !ok {
		p = parseText(text)
		parseCache.Lock()
		if parseCache.bytes+len(text) > maxCacheBytes {
			parseCache.lines, parseCache.bytes = nil, 0 // bounded: a watcher runs for days
		}
		if parseCache.lines == nil {
			parseCache.lines = map[string]parsed{}
		}
		parseCache.lines[string(text)] = p
		parseCache.bytes += len(text)
		parseCache.Unlock()
	}
	return p
}

// parseCache holds parsed lines by their bytes, at most maxCacheBytes of
// them; lines longer than maxCachedLine are not kept.
var parseCache struct {
	sync.Mutex
	lines map[string]parsed
	bytes int
}

const (
	maxCacheBytes = 2 << 20
	maxCachedLine = 16 << 10
)

// clone is p with its own Entity and Relation, so that no caller changes
// what another was given.
func (p parsed) clone() parsed {
	if p.entity != nil {
		e := *p.entity
		e.Observations = slices.Clone(e.Observations)
		p.entity = &e
	}
	if p.own != nil {
		e := *p.own
		e.Observations = slices.Clone(e.Observations)
		p.own = &e
	}
	if p.relation != nil {
		r := *p.relation
		p.relation = &r
	}
	return p
}

// onParse, when set by a test, runs at each parse of a line (parseText):
// a count of the lines an edit parses, which must not grow with the number
// of entities it writes.
var onParse func()

// parseText reads members into a map, not a struct: encoding/json matches
// struct fields case-insensitively ("Name" would fill Name), JSON.parse does
// not. Duplicate members keep the last, as in JSON.parse.
func parseText(text []byte) parsed {
	if onParse != nil {
		onParse()
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(text, &m) != nil || m == nil {
		return parsed{}
	}
	var p parsed
	str := func(key string) (string, bool) {
		raw, ok := m[key]
		if !ok {
			return "", false
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	p.kind, _ = str("type")
	p.name, p.named = str("name")
	switch p.kind {
	case "entity":
		et, ok := str("entityType")
		var obs []string
		raw, isArray := m["observations"]
		isArray = isArray && len(raw) > 0 && raw[0] == '['
		if p.named && ok && isArray && json.Unmarshal(raw, &obs) == nil {
			if obs == nil {
				obs = []string{}
			}
			p.entity = &Entity{Name: p.name, EntityType: et, Observations: obs}
			p.own = p.entity
		} else if p.named && isArray {
			var elems []json.RawMessage
			if json.Unmarshal(raw, &elems) == nil {
				own := &Entity{Name: p.name, EntityType: et, Observations: []string{}}
				for _, el := range elems {
					var s string
					if len(el) > 0 && el[0] == '"' && json.Unmarshal(el, &s) == nil {
						own.Observations = append(own.Observations, s)
					}
				}
				p.own = own
			}
		}
	case "relation":
		from, ok1 := str("from")
		to, ok2 := str("to")
		rt, ok3 := str("relationType")
		if ok1 && ok2 && ok3 {
			p.relation = &Relation{From: from, To: to, RelationType: rt}
		}
	}
	return p
}

// renderEntity writes e as the server's saveGraph does:
// JSON.stringify({type, name, entityType, observations}).
func renderEntity(e Entity) []byte {
	var b []byte
	b = append(b, `{"type":"entity","name":`...)
	b = appendJSString(b, e.Name)
	b = append(b, `,"entityType":`...)
	b = appendJSString(b, e.EntityType)
	b = append(b, `,"observations":[`...)
	for i, o := range e.Observations {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, o)
	}
	return append(b, "]}"...)
}

// appendJSString quotes s as JavaScript's JSON.stringify does: only '"', '\\'
// and control characters are escaped (\b \t \n \f \r by name, the rest as
// \u00xx in lowercase hex); '<', '>', '&', U+2028 and U+2029 stay literal,
// unlike encoding/json. Invalid UTF-8 becomes U+FFFD, as the server's UTF-8
// read would make it.
func appendJSString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// upsertLine edits an existing line of e's name in place and reports
// whether it changed: entityType becomes e's, and of the observations only
// the strings strata owns (see owns) are replaced by e's, in the place of
// the first of them (else before the others); every other observation —
// the user's own strings, a fork's {text, timestamp} objects, whatever its
// type — and every other member (a fork's createdAt, version, _savedAt, the
// key order, a final "\r") keep their bytes. A line whose observations
// member is there but is not an array is not edited: the error is an
// *ObservationsError (replacing it would lose it).
func upsertLine(text []byte, e Entity) ([]byte, bool, error) {
	edits := []jsonedit.Edit{{Key: "entityType", Value: json.RawMessage(appendJSString(nil, e.EntityType))}}
	ms, _ := members(text)
	var raw []byte
	at := -1
	for _, m := range ms {
		if m.key == "observations" { // the last occurrence: the one JSON.parse keeps
			raw, at = text[m.vstart:m.vend], m.vstart
		}
	}
	switch obs, ok := editObservations(e.Name, raw, e.Observations); {
	case !ok:
		return nil, false, &ObservationsError{Entity: e.Name, Col: at + 1, Got: jsonedit.Kind(raw)}
	case obs != nil:
		edits = append(edits, jsonedit.Edit{Key: "observations", Value: json.RawMessage(obs)})
	}
	out, err := jsonedit.EditMembers(text, edits)
	if err != nil {
		return renderEntity(e), true, nil // not reached: parseLine read the line as an object
	}
	return out, !bytes.Equal(out, text), nil
}

// editObservations is the observations array raw (nil: the line has
// none) with the strings strata owns (or that ours holds) replaced by ours,
// where the first of them was (else before the others); every other
// element keeps its bytes. It is nil when nothing changes, and ok is false
// when raw is not an array.
func editObservations(name string, raw []byte, ours []string) (out []byte, ok bool) {
	var elems []json.RawMessage
	if raw != nil && (raw[0] != '[' || json.Unmarshal(raw, &elems) != nil) {
		return nil, false
	}
	mine := func(el []byte) (string, bool) {
		var s string
		if len(el) == 0 || el[0] != '"' || json.Unmarshal(el, &s) != nil {
			return "", false
		}
		return s, owns(name, s) || slices.Contains(ours, s)
	}
	var owned []string
	for _, el := range elems {
		if s, m := mine(el); m {
			owned = append(owned, s)
		}
	}
	if raw != nil && slices.Equal(owned, ours) {
		return nil, true
	}
	b := []byte{'['}
	add := func(el []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, el...)
	}
	placed := false
	place := func() {
		for _, o := range ours {
			add(appendJSString(nil, o))
		}
		placed = true
	}
	if len(owned) == 0 {
		place()
	}
	for _, el := range elems {
		if _, m := mine(el); !m {
			add(el)
		} else if !placed {
			place()
		}
	}
	return append(b, ']'), true
}

// ObservationsError is an entity line of strata's own whose observations
// member is not an array: Upsert does not replace it (that would lose what
// it holds) and writes none of the entity's observations; the other
// entities are written. Path is the file (Upsert's path; a caller may set
// the name it shows), Line and Col (1-based, bytes) where the value starts.
type ObservationsError struct {
	Path      string
	Line, Col int
	Entity    string
	Got       string // "a string", "an object", "null", …
}

func (e *ObservationsError) Error() string {
	return fmt.Sprintf("%s:%d:%d: /observations: value must be an array, got %s: entity %q not written (strata replaces no observations it cannot keep; make it an array)",
		e.Path, e.Line, e.Col, e.Got, e.Entity)
}

// renderStrings writes a JSON array of strings as JSON.stringify does.
func renderStrings(ss []string) []byte {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, s)
	}
	return append(b, ']')
}

// upsertLines replaces or adds entities in data. Only the first line of an
// entity's name is edited, in place (upsertLine): it is the one the
// server's tools act on (add_observations and delete_observations edit the
// first entity of a name) and the one strata reads (Graph.Entity). Later
// lines of the name keep their bytes: the server keeps and serves them, and
// they may hold another agent's observations. A new entity goes after the
// last entity line, else before the first relation, else at the end, so
// the file keeps the server's order. Every other line keeps its bytes. An
// entity whose first line cannot be edited without loss (upsertLine) is
// left as it is and named in err (errors.Join of *ObservationsError); the
// other entities are written.
func upsertLines(data []byte, ents []Entity) (out []byte, changed bool, err error) {
	return upsertRemove(data, ents, nil, nil)
}

// upsertRemove is removeLines of remove, then upsertLines of ents, on one
// split of data with each line parsed once (a Doc): the cost is one pass
// over the file whatever the number of entities. It used to split and parse
// the whole file once for each entity and each name removed, through a
// cache of parsed lines that a file over 2 MB emptied at every pass, so an
// agent's step on a 40 000-entity graph took seconds (attack35b H2).
func upsertRemove(data []byte, ents []Entity, remove []string, gone map[string]string) (out []byte, changed bool, err error) {
	d := NewDoc(data)
	removed := d.removeFirst(remove, gone)
	upserted, err := d.upsert(ents)
	if !removed && !upserted {
		return data, false, err
	}
	return d.Bytes(), true, err
}

// upsert is upsertLines on the Doc's lines: each entity in turn, as if the
// file were read again after the one before. An existing line is never
// moved by the new ones (they go after the last entity line), so the line
// numbers an *ObservationsError gives are the lines' at the start.
func (d *Doc) upsert(ents []Entity) (changed bool, err error) {
	if len(ents) == 0 {
		return false, nil
	}
	first := map[string]int{}
	for i, p := range d.ps {
		if _, ok := first[p.name]; p.kind == "entity" && p.named && !ok {
			first[p.name] = i
		}
	}
	var errs []error
	var added [][]byte
	at := map[string]int{} // a new entity's index in added
	for _, e := range ents {
		if i, ok := first[e.Name]; ok {
			text, ok, err := upsertLine(d.ls[i].text, e)
			if oe := (*ObservationsError)(nil); errors.As(err, &oe) {
				oe.Line = i + 1
				errs = append(errs, oe)
			} else if ok {
				d.set(i, text)
				changed = true
			}
			continue
		}
		if j, ok := at[e.Name]; ok { // the same name again: its new line is the first
			if text, ok, _ := upsertLine(added[j], e); ok {
				added[j] = text
			}
			continue
		}
		at[e.Name] = len(added)
		added = append(added, renderEntity(e))
		changed = true
	}
	d.AddEntityLines(added)
	return changed, errors.Join(errs...)
}

// newEntityAt is where a new entity line goes among n lines, given the
// index of the last entity line and of the first relation line (-1 for
// none): after the last entity, else before the first relation, else at
// the end, so the file keeps the memory server's order.
func newEntityAt(n, lastEntity, firstRelation int) int {
	switch {
	case lastEntity >= 0:
		return lastEntity + 1
	case firstRelation >= 0:
		return firstRelation
	}
	return n
}

// removeLines drops the first entity line of each of the names: the one
// upsertLines edits, strata's; a later line of the same name is the memory
// server's, and keeps its bytes (as upsertLines leaves it). It undoes
// upsertLines' insertion exactly, final newline included. gone, when not
// nil, makes it safe to run again on the file it wrote (the sharing
// protocol re-applies an edit until the file holds it): it notes the text
// of each line removed, and a later run removes only a line of that text (a
// server write from the old file put it back), never the next line of the
// name.
func removeLines(data []byte, names []string, gone map[string]string) ([]byte, bool) {
	out, changed, _ := upsertRemove(data, nil, names, gone)
	return out, changed
}

// removeFirst is removeLines on the Doc's lines, in one pass: for each
// name, its first entity line (with gone, the first of the text gone holds
// for it), all taken out at once.
func (d *Doc) removeFirst(names []string, gone map[string]string) bool {
	if len(names) == 0 {
		return false
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	del := make([]bool, len(d.ls))
	found := map[string]bool{}
	for i, p := range d.ps {
		if p.kind != "entity" || !p.named || !want[p.name] || found[p.name] {
			continue
		}
		if was, again := gone[p.name]; again && string(d.ls[i].text) != was {
			continue // the server's own line of the name
		}
		found[p.name], del[i] = true, true
		if gone != nil {
			gone[p.name] = string(d.ls[i].text)
		}
	}
	if len(found) == 0 {
		return false
	}
	d.deleteMarked(del)
	return true
}

// insertLine puts text at index at, ending in the line ending of the
// nearest line before it that has one (else after it): "\r\n" in a CRLF
// file. Appended after a last line that has no final newline, the old last
// line gets one and the new line goes without, so the file still ends as it
// did (and deleteLine restores it).
func insertLine(ls []line, at int, text []byte) []line {
	crlf := crlfAt(ls, at)
	nl := true
	if at == len(ls) && at > 0 && !ls[at-1].nl {
		ls[at-1].nl = true
		if crlf {
			ls[at-1].text = append(ls[at-1].text[:len(ls[at-1].text):len(ls[at-1].text)], '\r')
		}
		nl = false
	}
	if crlf && nl && !bytes.HasSuffix(text, []byte("\r")) {
		text = append(text[:len(text):len(text)], '\r')
	}
	ls = append(ls, line{})
	copy(ls[at+1:], ls[at:])
	ls[at] = line{text: text, nl: nl}
	return ls
}

// crlfAt reports whether the nearest line before index at that ends in a
// newline (else the nearest after it) ends in "\r\n".
func crlfAt(ls []line, at int) bool {
	for i := at - 1; i >= 0; i-- {
		if ls[i].nl {
			return bytes.HasSuffix(ls[i].text, []byte("\r"))
		}
	}
	for i := at; i < len(ls); i++ {
		if ls[i].nl {
			return bytes.HasSuffix(ls[i].text, []byte("\r"))
		}
	}
	return false
}

// deleteLine removes line i. When it was the last line and had no final
// newline, the line before it loses its newline (and the "\r" before it):
// the inverse of insertLine. An empty line before it keeps its newline, as
// without it the line would be gone too (insertLine never puts a line after
// one).
func deleteLine(ls []line, i int) []line {
	if i == len(ls)-1 && !ls[i].nl && i > 0 {
		// the "\r" insertLine gave it is the one the lines before it end in
		text := ls[i-1].text
		if crlfAt(ls[:i-1], i-1) {
			text = bytes.TrimSuffix(text, []byte("\r"))
		}
		if len(text) > 0 {
			ls[i-1].nl, ls[i-1].text = false, text
		}
	}
	return append(ls[:i], ls[i+1:]...)
}
