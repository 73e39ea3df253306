package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/state"
)

// DecodeYAML decodes one YAML document into the values JSON has:
// map[string]any, []any, string, json.Number, bool and nil, so that it can be
// validated by a JSON Schema. Timestamps stay the string they were written
// as, non-string keys become their written form, and merge keys (<<) are
// applied. Syntax errors, an empty file, binary or non-UTF-8 bytes, duplicate
// keys, aliases that expand past the size of the input (alias bombs),
// nesting deeper than MaxDepth, NaN or infinite numbers, more than one
// document, and input larger than DefaultMaxSize are returned as problems
// with the line and column where they occur.
func DecodeYAML(path string, data []byte) (any, state.Problems) {
	if len(data) > DefaultMaxSize {
		return nil, tooLarge(path, len(data), DefaultMaxSize)
	}
	v, _, ps := decodeYAML(path, data)
	return v, ps
}

// MaxYAMLValues is the most values (scalars, sequences, mappings and
// aliases) strata decodes from one YAML document. The YAML library holds a
// node of ~400 bytes for each before strata sees any: 10 MB of
// "[1,1,…]" took 27 s and 2.2 GB to check, five times what the same JSON
// costs; a million values bound a YAML file near the cost of the largest
// JSON one. A handoff holds a few hundred.
const MaxYAMLValues = 1_000_000

// maxYAMLValues is MaxYAMLValues; tests lower it.
var maxYAMLValues = MaxYAMLValues

func decodeYAML(path string, data []byte) (v any, loc *locator, ps state.Problems) {
	data, ps = checkBytes(path, data)
	if ps != nil {
		return nil, nil, ps
	}
	if isBlank(data) {
		return nil, nil, state.Problems{{Path: path, Message: "file is empty"}}
	}
	// The watcher must survive any content: a panic in the YAML library
	// becomes a problem about this file.
	defer func() {
		if r := recover(); r != nil {
			v, loc, ps = nil, nil, state.Problems{{Path: path, Message: fmt.Sprintf("invalid YAML: %v", r)}}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.MaxNodes(maxYAMLValues)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // only comments: a null document
			return nil, &locator{find: func(string) (pos, bool) { return pos{}, false }}, nil
		}
		return nil, nil, yamlError(path, err)
	}
	// More than one document is rejected rather than truncated to the first:
	// a state file holds one document, and validating only the first would
	// record content that nobody checked.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		line, col := next.Line, next.Column
		if len(next.Content) > 0 {
			line, col = next.Content[0].Line, next.Content[0].Column
		}
		return nil, nil, state.Problems{{Path: path, Line: line, Col: col,
			Message: "multiple YAML documents, want one per file"}}
	case !errors.Is(err, io.EOF):
		return nil, nil, yamlError(path, err)
	}
	c := &yamlConverter{
		index:  newPosIndex(true),
		budget: 2*len(data) + 10000,
	}
	v, err := c.convert(&doc, 0)
	if err != nil {
		return nil, nil, state.Problems{{Path: path, Line: err.at.line, Col: err.at.col, Pointer: err.ptr, Message: err.msg}}
	}
	return v, &locator{find: func(ptr string) (pos, bool) {
		at, ok, _ := c.index.find(ptr)
		return at, ok
	}}, nil
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

// yamlError turns the YAML library's "yaml: line 3: ..." into a problem,
// at the line and column where the library found the problem (its
// MarkedError): the line in its message is that of the construct the
// problem is in (a tab on line 3 of a mapping that starts on line 2 said
// line 2; an error on the first line said no line: attack20-headline H8).
func yamlError(path string, err error) state.Problems {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "\n", " ")
	p := state.Problem{Path: path}
	if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if me := (*yaml.MarkedError)(nil); errors.As(err, &me) && me.Line > 0 {
		p.Line, p.Col = me.Line, me.Column
		if me.Context != "" && me.ContextLine != me.Line {
			// "did not find expected ']'" is found where the next token
			// is; the sequence it is missing from started there
			msg += fmt.Sprintf(" (%s started at %d:%d)", me.Context, me.ContextLine, me.ContextColumn)
		}
	}
	p.Message = "invalid YAML: " + msg
	return state.Problems{p}
}

// yamlConverter turns a yaml.Node tree into JSON values and indexes the
// position of each value.
type yamlConverter struct {
	index *posIndex
	cur   int32 // index's node of the value being converted
	// budget is how many more values may be produced. Without aliases a
	// document has fewer values than twice its bytes; aliases can multiply
	// them exponentially ("billion laughs"), so the budget stops that. A
	// scalar or key produced through an alias also costs its length: it is
	// shared, not copied, in the document, but hashed at each use and
	// written into each problem about it (a 100 KB key aliased as the key
	// of 1 000 objects that a schema closes made 200 MB of problems).
	budget  int
	aliased int // how many aliases the value being converted is under
}

// spend takes n from the budget; false when it is exhausted.
func (c *yamlConverter) spend(n int) bool {
	c.budget -= n
	return c.budget >= 0
}

const aliasBomb = "YAML aliases expand to too many values (alias bomb)"

type yamlErr struct {
	at  pos
	ptr string
	msg string
}

func (c *yamlConverter) fail(n *yaml.Node, msg string) *yamlErr {
	return &yamlErr{at: pos{n.Line, n.Column}, ptr: c.index.pointer(c.cur), msg: msg}
}

// convert is recursive; depth (the number of enclosing mappings and
// sequences) is capped by MaxDepth as in JSON, and an alias counts as a
// level, so a self-referencing alias stops there too.
func (c *yamlConverter) convert(n *yaml.Node, depth int) (any, *yamlErr) {
	if depth > MaxDepth || depth == MaxDepth && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
		return nil, c.fail(n, "nesting deeper than "+strconv.Itoa(MaxDepth)+" levels")
	}
	if !c.spend(1) {
		return nil, c.fail(n, aliasBomb)
	}
	// The first position recorded for a pointer wins: an alias is reported
	// where it is used, not where its anchor is.
	c.index.record(c.cur, pos{n.Line, n.Column})
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.convert(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "invalid YAML: unknown alias "+strconv.Quote(n.Value))
		}
		c.aliased++
		v, err := c.convert(n.Alias, depth+1)
		c.aliased--
		return v, err
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			c.cur = c.index.elem(c.cur, i)
			v, err := c.convert(item, depth+1)
			c.cur = c.index.parent(c.cur)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.ScalarNode:
		if c.aliased > 0 && !c.spend(len(n.Value)) {
			return nil, c.fail(n, aliasBomb)
		}
		return c.scalar(n)
	}
	return nil, c.fail(n, "invalid YAML: unknown node kind")
}

func (c *yamlConverter) mapping(n *yaml.Node, depth int) (any, *yamlErr) {
	obj := make(map[string]any, len(n.Content)/2)
	firstLine := make(map[string]int, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, val)
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		if (c.aliased > 0 || k.Kind == yaml.AliasNode) && !c.spend(len(key)) {
			return nil, c.fail(k, aliasBomb)
		}
		if line, dup := firstLine[key]; dup {
			e := c.fail(k, fmt.Sprintf("duplicate key %q (first at line %d)", key, line))
			e.ptr = c.index.pointer(c.cur) + "/" + pointerToken(key)
			return nil, e
		}
		firstLine[key] = k.Line
		c.cur = c.index.member(c.cur, key)
		v, err := c.convert(val, depth+1)
		c.cur = c.index.parent(c.cur)
		if err != nil {
			return nil, err
		}
		obj[key] = v
	}
	// Merged keys never override the mapping's own keys; among several
	// merged mappings the earlier wins, as YAML's merge key type specifies.
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, src := range srcs {
			v, err := c.convert(src, depth+1)
			if err != nil {
				return nil, err
			}
			sub, ok := v.(map[string]any)
			if !ok {
				return nil, c.fail(src, "invalid YAML: merge (<<) value must be a mapping or a list of mappings")
			}
			for k, v := range sub {
				if _, exists := obj[k]; !exists {
					obj[k] = v
				}
			}
		}
	}
	return obj, nil
}

// key returns a mapping key's string form; keys must be scalars.
func (c *yamlConverter) key(k *yaml.Node) (string, *yamlErr) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", c.fail(k, "mapping key must be a scalar, not a mapping or list")
	}
	return k.Value, nil
}

func (c *yamlConverter) scalar(n *yaml.Node) (any, *yamlErr) {
	if n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && isYAMLDecimal(n.Value) {
		return c.decimal(n)
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "invalid YAML: "+strconv.Quote(n.Value)+" is not a boolean")
		}
		return b, nil
	case "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			return nil, c.fail(n, "invalid YAML: "+strconv.Quote(n.Value)+" is not a number")
		}
		switch x := x.(type) {
		case int:
			return json.Number(strconv.Itoa(x)), nil
		case int64:
			return json.Number(strconv.FormatInt(x, 10)), nil
		case uint64:
			return json.Number(strconv.FormatUint(x, 10)), nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, c.fail(n, "value "+n.Value+" has no JSON equivalent (NaN or infinity)")
			}
			return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
		}
		return n.Value, nil
	}
	// !!str, !!timestamp (kept as written), !!binary and custom tags.
	return n.Value, nil
}

// isYAMLDecimal reports whether s is YAML's plain decimal number (core
// schema): [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?. Matched by
// hand: compiling the regular expression cost every process that read a YAML
// number (.strata.yaml's version, at each hook call) more than the match.
func isYAMLDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	n := digitsAt(s, i)
	i += n
	if i < len(s) && s[i] == '.' {
		i++
		m := digitsAt(s, i)
		if n == 0 && m == 0 {
			return false
		}
		i += m
	} else if n == 0 {
		return false
	}
	return exponentAt(s, i)
}

// isJSONNumber reports whether s is a number as JSON writes it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	n := digitsAt(s, i)
	if n == 0 || (n > 1 && s[i] == '0') {
		return false
	}
	i += n
	if i < len(s) && s[i] == '.' {
		m := digitsAt(s, i+1)
		if m == 0 {
			return false
		}
		i += 1 + m
	}
	return exponentAt(s, i)
}

// digitsAt counts the ASCII digits of s from i on.
func digitsAt(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '9' {
		n++
	}
	return n
}

// exponentAt reports whether s from i on is empty or [eE][-+]?[0-9]+.
func exponentAt(s string, i int) bool {
	if i == len(s) {
		return true
	}
	if s[i] != 'e' && s[i] != 'E' {
		return false
	}
	i++
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	n := digitsAt(s, i)
	return n > 0 && i+n == len(s)
}

// decimal converts a plain decimal number exactly as the JSON decoder does:
// kept as written when JSON writes it the same way, under the same limits
// ("number out of range"), so 1e400 is a number, not the string the YAML
// library makes of what float64 cannot hold, and 1e-400 is not zero.
func (c *yamlConverter) decimal(n *yaml.Node) (any, *yamlErr) {
	v := n.Value
	exp := ""
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		exp = v[i+1:]
	}
	if len(v) > maxNumberLen || exp != "" && !smallExponent([]byte(exp)) {
		return nil, c.fail(n, "number out of range: more than "+strconv.Itoa(maxNumberLen)+
			" characters or an exponent beyond ±"+strconv.Itoa(maxExponent))
	}
	if isJSONNumber(v) {
		return json.Number(v), nil
	}
	// YAML-only spellings (+1, .5, 1., 007): the value, written as JSON.
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(v, "+"))
	if !ok {
		return nil, c.fail(n, "invalid YAML: "+strconv.Quote(v)+" is not a number")
	}
	if r.IsInt() {
		return json.Number(r.Num().String()), nil
	}
	f := new(big.Float).SetPrec(200).SetRat(r)
	return json.Number(f.Text('g', -1)), nil
}

// WrittenScalar returns the text of the scalar that the top-level key holds
// in the YAML mapping document data, as written: "0x10" for max_size: 0x10,
// where DecodeYAML gives the number 16. Anchors and merge keys (<<) are
// followed as DecodeYAML follows them. ok is false when data holds no such
// scalar. data is expected to be a document DecodeYAML accepted.
func WrittenScalar(data []byte, key string) (text string, ok bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return "", false
	}
	return writtenScalar(doc.Content[0], key, 0)
}

func writtenScalar(m *yaml.Node, key string, depth int) (string, bool) {
	m = unalias(m)
	if m == nil || m.Kind != yaml.MappingNode || depth > MaxDepth {
		return "", false
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := unalias(m.Content[i]), m.Content[i+1]
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge":
			merges = append(merges, v)
		case k.Value == key:
			if v = unalias(v); v != nil && v.Kind == yaml.ScalarNode {
				return v.Value, true
			}
			return "", false
		}
	}
	// the mapping's own key wins; among merged mappings the earlier one
	for _, mv := range merges {
		srcs := []*yaml.Node{mv}
		if mv = unalias(mv); mv != nil && mv.Kind == yaml.SequenceNode {
			srcs = mv.Content
		}
		for _, src := range srcs {
			if s, ok := writtenScalar(src, key, depth+1); ok {
				return s, true
			}
		}
	}
	return "", false
}

// unalias is the node an alias names (bounded: a self-naming alias is nil).
func unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > MaxDepth {
			return nil
		}
		n = n.Alias
	}
	return n
}
