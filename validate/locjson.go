package validate

// smallJSON is the size up to which a document's locator indexes every
// value at its first lookup; above it, a lookup indexes only the values on
// the paths to the pointers asked for, in one scan that builds nothing.
// A 10 MB array of five million numbers with one problem at its root took
// 30 s and 1.3 GB to index whole.
const smallJSON = 256 << 10

// maxScans bounds the scans a large document's locator makes for lookups
// not announced together (want): past it, it indexes every value once.
const maxScans = 8

// jsonLocator finds the positions of the values of a JSON document that
// decoded without error.
type jsonLocator struct {
	data   []byte
	index  *posIndex
	full   bool            // index holds every value
	wanted map[string]bool // the pointers a partial index holds the paths of
	scans  int
}

func newJSONLocator(data []byte) *locator {
	l := &jsonLocator{data: data}
	return &locator{find: l.find, want: l.want}
}

// want makes sure the index holds the paths of ptrs, scanning the
// document once for all those it does not hold yet.
func (l *jsonLocator) want(ptrs []string) {
	if l.full {
		return
	}
	if len(l.data) <= smallJSON || l.scans >= maxScans {
		l.index, l.full = l.scan(nil), true
		return
	}
	if l.wanted == nil {
		l.wanted = make(map[string]bool)
	}
	missing := false
	for _, p := range ptrs {
		if !l.wanted[p] {
			l.wanted[p], missing = true, true
		}
	}
	if missing || l.index == nil {
		l.scans++
		l.index = l.scan(newPtrTrie(l.wanted))
	}
}

func (l *jsonLocator) find(ptr string) (pos, bool) {
	l.want([]string{ptr})
	at, ok, _ := l.index.find(ptr)
	return at, ok
}

// scan parses the document again, building no value, and indexes the
// positions of the values on the paths trie names (nil: of every value).
func (l *jsonLocator) scan(trie *ptrTrie) *posIndex {
	p := newJSONParser(l.data, true)
	p.want = skipAll
	p.trie, p.tcur = trie, trie
	p.parse()
	return p.index
}

// ptrTrie holds JSON Pointers token by token: at each level the tokens as
// a pointer writes them (an object key, escaped) and those that name an
// array element (a canonical non-negative integer) apart.
type ptrTrie struct {
	keys  map[string]*ptrTrie
	elems map[int]*ptrTrie
}

func newPtrTrie(ptrs map[string]bool) *ptrTrie {
	root := &ptrTrie{}
	for ptr := range ptrs {
		t := root
		for tok, rest, more := nextToken(ptr); more; tok, rest, more = nextToken(rest) {
			t = t.kid(tok)
		}
	}
	return root
}

// kid returns the node under t for tok, made when missing; a token that
// names an array element is both a key and an element, as find reads it.
func (t *ptrTrie) kid(tok string) *ptrTrie {
	if k, ok := t.keys[tok]; ok {
		return k
	}
	if t.keys == nil {
		t.keys = make(map[string]*ptrTrie)
	}
	k := &ptrTrie{}
	t.keys[tok] = k
	if n, ok := elemIndex(tok); ok {
		if t.elems == nil {
			t.elems = make(map[int]*ptrTrie)
		}
		t.elems[n] = k
	}
	return k
}
