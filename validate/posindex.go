package validate

import (
	"strconv"
	"strings"
)

// posIndex records where the values of one document are, so that a problem
// can name the line and column of the value at its JSON Pointer. Each value
// is a node holding its parent node and its own token (an object key,
// shared with the decoded text or the YAML node, or an array index), so the
// index takes a few words per value whatever the depth: a map keyed by each
// value's whole pointer took depth² × key length (10 KB of YAML reusing one
// 4 000-byte key through an alias 900 levels deep took 2.7 GB). Pointer
// strings are built only for the few pointers problems ask for.
//
// Several values can share one pointer: a YAML merge key's values, or keys
// that the pointer spells alike (oneLine writes a newline and a backslash
// followed by n the same way). firstWins says which one a lookup reports:
// the first recorded (YAML: an alias is reported where it is used) or the
// last (JSON).
type posIndex struct {
	nodes     []posNode
	firstWins bool
	// stack keeps only the values open where the parse stands: a value's
	// node is dropped once it is parsed, so the index takes a node per
	// level, not per value. A syntax error asks only for the pointer of the
	// value being read (a 10 MB array of numbers took 5 million nodes).
	stack bool

	// Made on the first lookup: the node with each parent and pointer
	// token, the first one when several (posNode.same chains the others),
	// and the escaped tokens of keys that pointer escapes, by key, so a key
	// reused through aliases is escaped once.
	kids    map[kidKey]int32
	escaped map[string]string
}

type posNode struct {
	key       string // an object member's key; "" for an array element
	parent    int32  // -1 for the document
	elem      int32  // an array element's index; -1 for an object member
	same      int32  // the next node with the same parent and token, -1 when none (set by link)
	line, col int32
	set       bool // line and col are known
}

type kidKey struct {
	parent int32
	elem   int32
	token  string // the key as the pointer writes it
}

// newPosIndex returns an index holding the document's top-level value,
// node 0, without a position yet.
func newPosIndex(firstWins bool) *posIndex {
	return &posIndex{nodes: []posNode{{parent: -1, elem: -1, same: -1}}, firstWins: firstWins}
}

// member adds the value of key in the object at node parent; elem the
// element n of the array there. Both return the new node.
func (x *posIndex) member(parent int32, key string) int32 {
	x.nodes = append(x.nodes, posNode{key: key, parent: parent, elem: -1, same: -1})
	return int32(len(x.nodes) - 1)
}

func (x *posIndex) elem(parent int32, n int) int32 {
	x.nodes = append(x.nodes, posNode{parent: parent, elem: int32(n), same: -1})
	return int32(len(x.nodes) - 1)
}

// parent returns the parent node of n, the value just parsed; a stack
// index drops n, the last node (its own children were dropped before it).
func (x *posIndex) parent(n int32) int32 {
	up := x.nodes[n].parent
	if x.stack {
		x.nodes = x.nodes[:n]
	}
	return up
}

// record sets the position of node n; when firstWins, only its first.
func (x *posIndex) record(n int32, at pos) {
	nd := &x.nodes[n]
	if nd.set && x.firstWins {
		return
	}
	nd.line, nd.col, nd.set = int32(at.line), int32(at.col), true
}

// pointer returns the JSON Pointer of node n, as pointer() writes it.
func (x *posIndex) pointer(n int32) string {
	var tokens []string
	for ; n > 0; n = x.nodes[n].parent {
		nd := &x.nodes[n]
		t := nd.key
		if nd.elem >= 0 {
			t = strconv.Itoa(int(nd.elem))
		}
		tokens = append(tokens, t)
	}
	for i, j := 0, len(tokens)-1; i < j; i, j = i+1, j-1 {
		tokens[i], tokens[j] = tokens[j], tokens[i]
	}
	return pointer(tokens)
}

// nextToken splits the first token off a JSON Pointer as written ("/a/b":
// "a", "/b"); more is false when ptr does not start with one ("" or a
// pointer without its leading slash).
func nextToken(ptr string) (tok, rest string, more bool) {
	if ptr == "" || ptr[0] != '/' {
		return "", "", false
	}
	ptr = ptr[1:]
	if i := strings.IndexByte(ptr, '/'); i >= 0 {
		return ptr[:i], ptr[i:], true
	}
	return ptr, "", true
}

// elemIndex reports whether a pointer token names an array element: a
// canonical non-negative integer that fits 32 bits.
func elemIndex(tok string) (int, bool) {
	n, err := strconv.ParseInt(tok, 10, 32)
	if err != nil || n < 0 || strconv.Itoa(int(n)) != tok {
		return 0, false
	}
	return int(n), true
}

// link makes the lookup table. Nodes are chained in the order they were
// added, which is the order their first positions were recorded in.
func (x *posIndex) link() {
	if x.kids != nil {
		return
	}
	x.kids = make(map[kidKey]int32, len(x.nodes))
	for i := int32(len(x.nodes) - 1); i > 0; i-- {
		nd := &x.nodes[i]
		k := kidKey{parent: nd.parent, elem: nd.elem}
		if nd.elem < 0 {
			k.token = x.token(nd.key)
		}
		if next, ok := x.kids[k]; ok {
			nd.same = next
		}
		x.kids[k] = i
	}
}

// token is key as a pointer writes it (pointerToken), the same string
// each time for the same key.
func (x *posIndex) token(key string) string {
	if !needsEscape(key) {
		return key
	}
	if t, ok := x.escaped[key]; ok {
		return t
	}
	if x.escaped == nil {
		x.escaped = make(map[string]string)
	}
	t := pointerToken(key)
	x.escaped[key] = t
	return t
}

// find returns the position of the value at ptr or, when no value there has
// one, of its nearest ancestor that has one; exact says which. ptr is
// compared as pointer() writes pointers, token by token.
func (x *posIndex) find(ptr string) (at pos, ok, exact bool) {
	x.link()
	cands := []int32{0}
	for {
		if n := x.pick(cands); n >= 0 {
			at, ok, exact = pos{int(x.nodes[n].line), int(x.nodes[n].col)}, true, true
		} else {
			exact = false
		}
		tok, rest, more := nextToken(ptr)
		if !more {
			return at, ok, exact && ptr == ""
		}
		ptr = rest
		elem := int32(-1)
		if n, isElem := elemIndex(tok); isElem {
			elem = int32(n)
		}
		var next []int32
		for _, c := range cands {
			next = x.chain(next, kidKey{parent: c, elem: -1, token: tok})
			if elem >= 0 {
				next = x.chain(next, kidKey{parent: c, elem: elem})
			}
		}
		if len(next) == 0 {
			return at, ok, false
		}
		cands = next
	}
}

// chain appends the nodes with key k to ns.
func (x *posIndex) chain(ns []int32, k kidKey) []int32 {
	n, ok := x.kids[k]
	for ok && n >= 0 {
		ns = append(ns, n)
		n = x.nodes[n].same
	}
	return ns
}

// pick returns the node of ns whose position a lookup reports, -1 when
// none has one.
func (x *posIndex) pick(ns []int32) int32 {
	best := int32(-1)
	for _, n := range ns {
		if !x.nodes[n].set {
			continue
		}
		if best < 0 || x.firstWins && n < best || !x.firstWins && n > best {
			best = n
		}
	}
	return best
}
