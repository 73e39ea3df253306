// Package infer drafts a JSON Schema (2020-12) from example documents: the
// loosest useful schema that accepts every one of them. It works on decoded
// values (map[string]any, []any, string, json.Number, bool, nil, as package
// validate decodes JSON and YAML) and depends on nothing outside the
// standard library.
//
// What it infers, per position in the documents:
//   - the JSON types seen there ("integer" when every number is whole);
//   - for objects, the properties seen and, as required, those present in
//     every object at that position; additionalProperties stays open;
//   - for arrays, one item schema that accepts every element seen;
//   - for strings, format date-time when every value is an RFC 3339 date
//     and time, and an enum when the values form a small closed set (at most
//     MaxEnum distinct values, each short and without spaces, and at least
//     one value repeated, so a single example never becomes a constant).
package infer

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Draft is the $schema of every inferred schema.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// MaxEnum is the most distinct strings an inferred enum lists.
const MaxEnum = 8

// maxEnumLen is the longest string an inferred enum lists.
const maxEnumLen = 40

// Schema is an inferred JSON Schema, its keywords in a fixed order.
type Schema struct {
	Schema     string             `json:"$schema,omitempty"`
	Comment    string             `json:"$comment,omitempty"`
	Type       any                `json:"type,omitempty"` // a string, or a sorted list of them
	Format     string             `json:"format,omitempty"`
	Enum       []any              `json:"enum,omitempty"`
	Properties map[string]*Schema `json:"properties,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Items      *Schema            `json:"items,omitempty"`
}

// Inferrer accumulates documents. The zero value is ready to use.
type Inferrer struct {
	root node
}

// Add takes one more document into account.
func (in *Inferrer) Add(doc any) {
	in.root.add(doc)
}

// Schema returns the schema accepting every document added, with $schema
// and the given $comment at its root. With no documents it accepts anything.
func (in *Inferrer) Schema(comment string) *Schema {
	s := in.root.schema()
	s.Schema, s.Comment = Draft, comment
	return s
}

// Marshal encodes a schema as indented JSON ending with a newline.
func Marshal(s *Schema) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s) // a Schema always encodes
	return []byte(b.String())
}

type node struct {
	types map[string]bool

	strs     map[string]int // distinct strings and how often each was seen, until there are too many
	strTotal int
	noEnum   bool // a string too long, with spaces, or too many distinct ones
	notDate  bool

	objects int
	props   map[string]*node
	present map[string]int

	items *node
}

func (n *node) add(v any) {
	if n.types == nil {
		n.types = map[string]bool{}
	}
	switch v := v.(type) {
	case nil:
		n.types["null"] = true
	case bool:
		n.types["boolean"] = true
	case json.Number:
		n.types[numberType(string(v))] = true
	case float64, int, int64:
		n.types[numberType(fmt.Sprint(v))] = true
	case string:
		n.types["string"] = true
		n.addString(v)
	case map[string]any:
		n.types["object"] = true
		n.objects++
		if n.props == nil {
			n.props, n.present = map[string]*node{}, map[string]int{}
		}
		for k, x := range v {
			c := n.props[k]
			if c == nil {
				c = &node{}
				n.props[k] = c
			}
			c.add(x)
			n.present[k]++
		}
	case []any:
		n.types["array"] = true
		if n.items == nil {
			n.items = &node{}
		}
		for _, x := range v {
			n.items.add(x)
		}
	}
}

func (n *node) addString(s string) {
	if !IsDateTime(s) {
		n.notDate = true
	}
	n.strTotal++
	if n.noEnum {
		return
	}
	if len(s) == 0 || len(s) > maxEnumLen || strings.ContainsAny(s, " \t\r\n") {
		n.noEnum = true
		return
	}
	if n.strs == nil {
		n.strs = map[string]int{}
	}
	n.strs[s]++
	if len(n.strs) > MaxEnum {
		n.noEnum, n.strs = true, nil
	}
}

func numberType(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if ok && r.IsInt() {
		return "integer"
	}
	return "number"
}

func (n *node) schema() *Schema {
	s := &Schema{}
	if len(n.types) == 0 {
		return s // never seen a value here (an always-empty array's items): anything
	}
	if n.types["number"] {
		delete(n.types, "integer") // every integer is a number
	}
	types := make([]string, 0, len(n.types))
	for t := range n.types {
		types = append(types, t)
	}
	sort.Strings(types)
	if len(types) == 1 {
		s.Type = types[0]
	} else {
		s.Type = types
	}
	if n.types["string"] {
		if !n.notDate {
			s.Format = "date-time"
		} else if !n.noEnum && len(n.strs) > 0 && n.strTotal > len(n.strs) {
			vals := make([]string, 0, len(n.strs))
			for v := range n.strs {
				vals = append(vals, v)
			}
			sort.Strings(vals)
			for _, v := range vals {
				s.Enum = append(s.Enum, v)
			}
			for _, t := range types { // enum restricts every type: list the others' values too
				if t == "null" {
					s.Enum = append(s.Enum, nil)
				} else if t != "string" {
					s.Enum = nil // other types' values are open: no enum
					break
				}
			}
		}
	}
	if n.objects > 0 {
		s.Properties = map[string]*Schema{}
		for k, c := range n.props {
			s.Properties[k] = c.schema()
			if n.present[k] == n.objects {
				s.Required = append(s.Required, k)
			}
		}
		sort.Strings(s.Required)
	}
	if n.items != nil && len(n.items.types) > 0 {
		s.Items = n.items.schema()
	}
	return s
}

// dateTimeRE is RFC 3339's date-time, as JSON Schema's format asserts it.
var dateTimeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$`)
})

// IsDateTime reports whether s is an RFC 3339 date-time.
func IsDateTime(s string) bool {
	if !dateTimeRE().MatchString(s) {
		return false
	}
	t := strings.ToUpper(s)
	if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
		// time.Parse refuses a leap second (:60), which RFC 3339 allows; be strict.
		return false
	}
	return true
}
