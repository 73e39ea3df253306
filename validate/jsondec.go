package validate

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects (JSON or YAML) that
// strata decodes. Real state files nest a few levels; the cap keeps hostile
// input (docs/contract.md §13: 100 000-deep nesting) from exhausting the stack of the
// recursive decoders and of the schema validator.
const MaxDepth = 1000

// pos is a 1-based line and column; columns count characters, not bytes.
type pos struct{ line, col int }

// jsonParser decodes one JSON text into map[string]any, []any, string,
// json.Number, bool and nil. It is a recursive-descent parser whose depth is
// capped by MaxDepth. When index is non-nil it also records the position of
// every value; validation only asks for that on a second pass over
// documents that have problems, so valid files are scanned once and
// allocate no index.
type jsonParser struct {
	data  []byte
	text  string // data as a string, made once: keys, strings without escapes and numbers are slices of it
	i     int
	index *posIndex // nil unless positions are wanted
	cur   int32     // index's node of the value being parsed, when recording

	// trie, when recording, limits the index to the values on the paths
	// it names (nil: every value); tcur is its node for the value being
	// parsed, nil off those paths. dupsAtKey reports a duplicate key where
	// it is read (seen), as a syntax error's second pass wants.
	trie, tcur *ptrTrie
	dupsAtKey  bool

	// members holds the members of the objects being parsed, innermost
	// last: an object's map is made once its size is known (a map grown one
	// key at a time rehashed 50 keys three times).
	members []member
	want    *Want   // what to build: nil builds all (DecodeJSONFor)
	dupTab  []int32 // open-addressing table of a skipped object's keys (dups)

	// Incremental line/column tracking: positions are asked for in increasing
	// offset order, so each request only scans the bytes since the last one.
	lastOff, lastLine, lastCol int
}

// member is one key of an object being parsed, with its value.
type member struct {
	key  string
	v    any
	off  int  // the key's offset
	keep bool // built: not skipped (DecodeJSONFor)
}

// Want names what DecodeJSONFor builds of a document: under an object the
// members Keys names, under an array the elements Elems names, each as its
// own Want; All builds the whole value there. Everything else is checked as
// DecodeJSON checks it (syntax, duplicate keys, depth) but not built.
type Want struct {
	All   bool
	Keys  map[string]*Want
	Elems map[int]*Want
}

// skipAll checks a value without building it. Inside the parser a nil
// *Want builds the whole value.
var skipAll = &Want{}

// inner is how the parser builds a member or element of a partly wanted
// value, given what the Want names for it (c, nil when it names nothing):
// skipAll, nil (all of it) or c itself.
func inner(c *Want) *Want {
	switch {
	case c == nil:
		return skipAll
	case c.All:
		return nil
	}
	return c
}

// syntaxError is a JSON syntax error at a byte offset.
type syntaxError struct {
	off   int
	msg   string
	dup   string // the repeated key, for a duplicate key error
	first int    // where the first value of the repeated key starts, when known (recording)
}

func (e *syntaxError) Error() string { return e.msg }

func newJSONParser(data []byte, record bool) *jsonParser {
	p := &jsonParser{data: data, lastLine: 1, lastCol: 1}
	if record {
		p.index = newPosIndex(false)
	}
	return p
}

// parsers are decoding parsers done with, kept with their member stack and
// duplicate table: a blame decodes 10 000 versions one after another.
var parsers sync.Pool

// getParser is newJSONParser(data, false), reusing a parser put back.
func getParser(data []byte) *jsonParser {
	p, _ := parsers.Get().(*jsonParser)
	if p == nil {
		return newJSONParser(data, false)
	}
	p.data, p.lastLine, p.lastCol = data, 1, 1
	return p
}

// putParser gives p back; p is not to be used after it. A parser grown
// for a large document is dropped rather than kept.
func putParser(p *jsonParser) {
	if p.index != nil || cap(p.members) > 4096 || cap(p.dupTab) > 1<<14 {
		return
	}
	// an object's members are cleared when it ends: only those of objects a
	// failed parse left open are still there
	clear(p.members)
	*p = jsonParser{members: p.members[:0], dupTab: p.dupTab}
	parsers.Put(p)
}

// posAt converts a byte offset to a line and column. Offsets must not
// decrease between calls, except that any offset may be asked for first.
func (p *jsonParser) posAt(off int) pos {
	if off < p.lastOff {
		p.lastOff, p.lastLine, p.lastCol = 0, 1, 1
	}
	off = min(off, len(p.data))
	for i := p.lastOff; i < off; i++ {
		c := p.data[i]
		switch {
		case c == '\n':
			p.lastLine++
			p.lastCol = 1
		case c < utf8.RuneSelf || utf8.RuneStart(c):
			p.lastCol++
		}
	}
	p.lastOff = off
	return pos{p.lastLine, p.lastCol}
}

// parse decodes the whole input: one value, surrounded by whitespace only.
func (p *jsonParser) parse() (any, *syntaxError) {
	p.text = string(p.data)
	if p.members == nil {
		// at most one member per ':' outside strings, and rarely many inside
		p.members = make([]member, 0, min(bytes.Count(p.data, []byte{':'}), 4096))
	}
	p.skipSpace()
	if p.i == len(p.data) {
		return nil, &syntaxError{off: p.i, msg: "file is empty"}
	}
	v, err := p.value(0, p.want)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(p.data) {
		return nil, p.errUnexpected("after the top-level value")
	}
	return v, nil
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) eof() *syntaxError {
	return &syntaxError{off: len(p.data), msg: "invalid JSON: unexpected end of input"}
}

// errUnexpected reports the character at p.i; want says what was expected.
func (p *jsonParser) errUnexpected(want string) *syntaxError {
	if p.i >= len(p.data) {
		return p.eof()
	}
	r, _ := utf8.DecodeRune(p.data[p.i:])
	return &syntaxError{off: p.i, msg: "invalid JSON: unexpected character " + quoteRune(r) + " " + want}
}

func quoteRune(r rune) string {
	if r == '\'' {
		return `"'"`
	}
	return strconv.QuoteRune(r)
}

func (p *jsonParser) record() {
	if p.index == nil || p.trie != nil && p.tcur == nil {
		return
	}
	p.index.record(p.cur, p.posAt(p.i))
}

// enter moves the index to the value of key in the object being parsed,
// or to element n (n ≥ 0) of the array: it adds the value's node when
// recording and the value is on a wanted path (added). leave moves back.
func (p *jsonParser) enter(key string, n int) (up *ptrTrie, added bool) {
	if p.index == nil {
		return nil, false
	}
	up = p.tcur
	if p.trie != nil {
		if p.tcur == nil {
			return up, false
		}
		if n < 0 {
			p.tcur = p.tcur.keys[p.index.token(key)]
		} else {
			p.tcur = p.tcur.elems[n]
		}
		if p.tcur == nil {
			return up, false
		}
	}
	if n < 0 {
		p.cur = p.index.member(p.cur, key)
	} else {
		p.cur = p.index.elem(p.cur, n)
	}
	return up, true
}

func (p *jsonParser) leave(up *ptrTrie, added bool) {
	if added {
		p.cur = p.index.parent(p.cur)
	}
	p.tcur = up
}

// value parses the value starting at p.i (whitespace already skipped),
// building what w wants of it (nil: all of it).
func (p *jsonParser) value(depth int, w *Want) (any, *syntaxError) {
	if p.i >= len(p.data) {
		return nil, p.eof()
	}
	p.record()
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= MaxDepth {
			return nil, &syntaxError{off: p.i, msg: "nesting deeper than " + strconv.Itoa(MaxDepth) + " levels"}
		}
		return p.object(depth+1, w)
	case c == '[':
		if depth >= MaxDepth {
			return nil, &syntaxError{off: p.i, msg: "nesting deeper than " + strconv.Itoa(MaxDepth) + " levels"}
		}
		return p.array(depth+1, w)
	case c == '"':
		if w == skipAll {
			_, err := p.strText()
			return nil, err
		}
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		if w == skipAll {
			_, err := p.numberText()
			return nil, err
		}
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errUnexpected("looking for a value")
	}
}

func (p *jsonParser) literal(word string) *syntaxError {
	for k := 0; k < len(word); k++ {
		if p.i+k >= len(p.data) {
			return p.eof()
		}
		if p.data[p.i+k] != word[k] {
			p.i += k
			return p.errUnexpected("in literal " + word)
		}
	}
	p.i += len(word)
	return nil
}

func (p *jsonParser) object(depth int, w *Want) (any, *syntaxError) {
	p.i++ // '{'
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		if w == skipAll {
			return nil, nil
		}
		return map[string]any{}, nil
	}
	base := len(p.members)
	// When recording, a duplicate key is reported where it is read, before
	// its value (that is the error a user sees); otherwise it is found when
	// the map is made: either way the document fails.
	// seen maps each key read to the offset of its value
	var seen map[string]int
	if p.dupsAtKey {
		seen = map[string]int{}
	}
	for {
		if p.i >= len(p.data) {
			return nil, p.eof()
		}
		if p.data[p.i] != '"' {
			if p.data[p.i] == '}' { // the opening '{}' case returned above
				return nil, &syntaxError{off: p.i, msg: "invalid JSON: trailing comma before '}'"}
			}
			return nil, p.errUnexpected("looking for an object key")
		}
		keyOff := p.i
		key, err := p.strText()
		if err != nil {
			return nil, err
		}
		if seen != nil {
			if first, ok := seen[key]; ok {
				e := dupKey(keyOff, key)
				e.first = first
				return nil, e
			}
		}
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.eof()
		}
		if p.data[p.i] != ':' {
			return nil, p.errUnexpected("after object key, want ':'")
		}
		p.i++
		p.skipSpace()
		if seen != nil {
			seen[key] = p.i
		}
		up, added := p.enter(key, -1)
		c := w
		if w != nil && w != skipAll {
			c = inner(w.Keys[key])
		}
		v, err := p.value(depth, c)
		if err != nil {
			return nil, err
		}
		p.leave(up, added)
		p.members = append(p.members, member{key, v, keyOff, c != skipAll})
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.eof()
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case '}':
			p.i++
			if w != nil {
				return p.endPartial(base, w)
			}
			return p.endObject(base)
		default:
			return nil, p.errUnexpected("after object value, want ',' or '}'")
		}
	}
}

// endObject makes the map of the members from base on and pops them.
func (p *jsonParser) endObject(base int) (any, *syntaxError) {
	ms := p.members[base:]
	obj := make(map[string]any, len(ms))
	for _, m := range ms {
		obj[m.key] = m.v
	}
	if len(obj) != len(ms) { // a key seen twice: name the first one
		return nil, p.checkDups(ms)
	}
	clear(ms) // the values are the map's now
	p.members = p.members[:base]
	return obj, nil
}

// endPartial ends an object of which w wants some members or none: its
// keys are checked for duplicates without a map of them all, and only the
// wanted members are built.
func (p *jsonParser) endPartial(base int, w *Want) (any, *syntaxError) {
	ms := p.members[base:]
	if err := p.checkDups(ms); err != nil {
		return nil, err
	}
	var obj map[string]any
	if w != skipAll {
		n := 0
		for _, m := range ms {
			if m.keep {
				n++
			}
		}
		obj = make(map[string]any, n)
		for _, m := range ms {
			if m.keep {
				obj[m.key] = m.v
			}
		}
	}
	clear(ms)
	p.members = p.members[:base]
	if obj == nil {
		return nil, nil
	}
	return obj, nil
}

// checkDups finds the first key of ms seen before it: by comparing each
// with those before for a few, else through an open-addressing table kept
// for the next object.
func (p *jsonParser) checkDups(ms []member) *syntaxError {
	if len(ms) <= 8 {
		for i := 1; i < len(ms); i++ {
			for j := 0; j < i; j++ {
				if ms[j].key == ms[i].key {
					return dupKey(ms[i].off, ms[i].key)
				}
			}
		}
		return nil
	}
	size := 16
	for size < 2*len(ms) {
		size *= 2
	}
	if cap(p.dupTab) < size {
		p.dupTab = make([]int32, size)
	}
	tab := p.dupTab[:size]
	for i := range tab {
		tab[i] = -1
	}
	for i, m := range ms {
		j := int(maphash.String(dupSeed, m.key)) & (size - 1)
		for tab[j] >= 0 {
			if ms[tab[j]].key == m.key {
				return dupKey(m.off, m.key)
			}
			j = (j + 1) & (size - 1)
		}
		tab[j] = int32(i)
	}
	return nil
}

var dupSeed = maphash.MakeSeed()

func dupKey(off int, key string) *syntaxError {
	return &syntaxError{off: off, msg: "duplicate key " + strconv.Quote(key), dup: key, first: -1}
}

func (p *jsonParser) array(depth int, w *Want) (any, *syntaxError) {
	p.i++ // '['
	var arr []any
	if w != skipAll {
		arr = []any{}
	}
	n := 0 // elements so far
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		if w == skipAll {
			return nil, nil
		}
		return arr, nil
	}
	for {
		if p.i < len(p.data) && p.data[p.i] == ']' {
			return nil, &syntaxError{off: p.i, msg: "invalid JSON: trailing comma before ']'"}
		}
		up, added := p.enter("", n)
		c := w
		if w != nil && w != skipAll {
			c = inner(w.Elems[n])
		}
		v, err := p.value(depth, c)
		if err != nil {
			return nil, err
		}
		p.leave(up, added)
		if w != skipAll {
			arr = append(arr, v) // an element not wanted is nil: the length stays
		}
		n++
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.eof()
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			if w == skipAll {
				return nil, nil
			}
			return arr, nil
		default:
			return nil, p.errUnexpected("after array element, want ',' or ']'")
		}
	}
}

// str parses a string. The input is known to be valid UTF-8 (checked before
// parsing), so only escapes and control characters need attention.
func (p *jsonParser) str() (any, *syntaxError) {
	s, err := p.strText()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// strText parses a string into its text (an object key is not boxed).
func (p *jsonParser) strText() (string, *syntaxError) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.data) {
		c := p.data[p.i]
		if c == '"' {
			s := p.text[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' {
			return p.strEscaped(start)
		}
		if c < 0x20 {
			return "", &syntaxError{off: p.i, msg: "invalid JSON: control character " + controlName(c) + " in string"}
		}
		p.i++
	}
	return "", p.eof()
}

func controlName(c byte) string {
	return "U+" + strings.ToUpper(strconv.FormatInt(int64(c)+0x10000, 16)[1:])
}

// strEscaped continues a string from its first backslash.
func (p *jsonParser) strEscaped(start int) (string, *syntaxError) {
	b := make([]byte, 0, p.i-start+16)
	b = append(b, p.data[start:p.i]...)
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return "", &syntaxError{off: p.i, msg: "invalid JSON: control character " + controlName(c) + " in string"}
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.data) {
			return "", p.eof()
		}
		esc := p.data[p.i+1]
		switch esc {
		case '"', '\\', '/':
			b = append(b, esc)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4(p.i + 2)
			if !ok {
				return "", p.badEscape()
			}
			p.i += 6
			if utf16.IsSurrogate(r) {
				// A high surrogate followed by a low one makes one rune;
				// a lone surrogate becomes U+FFFD, as in encoding/json.
				if r2, ok := p.hex4(p.i + 2); ok && p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						p.i += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", p.badEscape()
		}
		p.i += 2
	}
	return "", p.eof()
}

func (p *jsonParser) badEscape() *syntaxError {
	end := min(p.i+6, len(p.data))
	if p.data[p.i+1] != 'u' {
		end = p.i + 2
	}
	seq := string(p.data[p.i:end])
	if !utf8.ValidString(seq) {
		seq = seq[:2]
	}
	return &syntaxError{off: p.i, msg: "invalid JSON: invalid escape " + strconv.Quote(seq) + " in string"}
}

func (p *jsonParser) hex4(at int) (rune, bool) {
	if at+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number parses -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? into a
// json.Number, which keeps the exact text for the schema validator.
func (p *jsonParser) number() (any, *syntaxError) {
	t, err := p.numberText()
	if err != nil {
		return nil, err
	}
	return json.Number(t), nil
}

// numberText parses a number into its text (a number checked and not built
// is not boxed).
func (p *jsonParser) numberText() (string, *syntaxError) {
	start := p.i
	d := p.data
	if d[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case digits() == 0:
		return "", p.errUnexpected("in number, want a digit")
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return "", p.errUnexpected("in number, want a digit after '.'")
		}
	}
	expStart := 0
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		expStart = p.i
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return "", p.errUnexpected("in number, want a digit in the exponent")
		}
	}
	if p.i-start > maxNumberLen || expStart > 0 && !smallExponent(d[expStart:p.i]) {
		return "", &syntaxError{off: start, msg: "number out of range: more than " + strconv.Itoa(maxNumberLen) +
			" characters or an exponent beyond ±" + strconv.Itoa(maxExponent)}
	}
	return p.text[start:p.i], nil
}

// Limits on numbers: the schema validator computes with exact rationals, so
// 1e999999999 or a megabyte of digits would take it minutes. No state file
// needs numbers beyond these.
const (
	maxNumberLen = 100
	maxExponent  = 400
)

// smallExponent reports whether the exponent digits (with optional sign)
// stay within ±maxExponent.
func smallExponent(exp []byte) bool {
	exp = bytes.TrimLeft(exp, "+-")
	n := 0
	for _, c := range exp {
		n = n*10 + int(c-'0')
		if n > maxExponent {
			return false
		}
	}
	return true
}

// pointer builds an RFC 6901 JSON Pointer from its unescaped tokens.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerToken(t))
	}
	return b.String()
}

// pointerToken is one token as pointer writes it: RFC 6901's escapes, then
// oneLine's.
func pointerToken(t string) string {
	if strings.ContainsAny(t, "~/") {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return oneLine(t)
}

// needsEscape reports whether pointerToken(t) differs from t.
func needsEscape(t string) bool {
	return strings.ContainsAny(t, "~/") || strings.ContainsFunc(t, breaksLine)
}

// oneLine escapes the characters that would break a problem's one-line
// output or act on the terminal it is printed to (control characters, C1
// among them, Unicode line separators and format characters: bidi
// overrides, zero widths) as Go escapes, as state.TermSafe quotes them
// everywhere else. Keys and patterns are free text; messages must stay
// one line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, breaksLine) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if breaksLine(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// breaksLine reports whether oneLine escapes r: a U+009B in a key was the
// terminal's CSI in every problem line (attack34b F3), a U+202E turned
// the rest of the line around.
func breaksLine(r rune) bool {
	return unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r)
}
