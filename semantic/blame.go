package semantic

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-dev/strata/state"
)

// Version is one recorded version of a file, oldest first in a history.
type Version struct {
	Entry   state.Entry
	Content []byte // nil for a deletion
}

// Origin is the commit that gave something its current value.
type Origin struct {
	Commit     string       `json:"commit"`
	Time       time.Time    `json:"time"`
	Source     state.Source `json:"source"`
	Restored   bool         `json:"restored,omitempty"`    // brought back by a restore...
	RestoredBy string       `json:"restored_by,omitempty"` // ...in this commit
	Session    string       `json:"session,omitempty"`     // the Claude Code session that wrote it, when known
	ToolUse    string       `json:"tool_use,omitempty"`    // and its tool call
}

// BlameLine is one key (a JSON Pointer, a graph observation or relation) or
// one MEMORY.md line, with its origin.
type BlameLine struct {
	Key   string `json:"key,omitempty"`  // pointer or graph item
	Line  int    `json:"line,omitempty"` // MEMORY.md: 1-based line
	Value string `json:"value"`          // compact JSON for a pointer; the text of a line
	Origin
}

func originOf(e state.Entry) Origin {
	return Origin{Commit: e.Commit, Time: e.Time, Source: e.Source, Session: e.Session, ToolUse: e.ToolUse}
}

// History is a file's recorded versions, oldest first, whose bytes are
// read on demand: a blame reads only as far back as its answer needs.
type History interface {
	Len() int
	Entry(i int) state.Entry
	Content(i int) ([]byte, error) // nil for a deletion
}

// Versions is a History held in memory.
type Versions []Version

func (vs Versions) Len() int                      { return len(vs) }
func (vs Versions) Entry(i int) state.Entry       { return vs[i].Entry }
func (vs Versions) Content(i int) ([]byte, error) { return vs[i].Content, nil }

// Blame gives each key or line of the last version the commit that gave it
// its value. A value a restore brought back blames the commit that first
// wrote it, marked restored. prefix, for a tree, keeps only the keys at or
// under that JSON Pointer; a pointer naming nothing is an error.
//
// Keys are blamed walking back from the last version: a key's origin is the
// oldest version of the unbroken run of versions holding its current value,
// so the walk stops once every key's run has ended (a restored key's walk
// goes on to the first version that ever held the value). MEMORY.md lines
// are blamed walking forward, as git blame does.
func Blame(path string, kind Kind, h History, prefix string) ([]BlameLine, error) {
	n := h.Len()
	if n == 0 {
		return nil, fmt.Errorf("%s: no versions", path)
	}
	lastContent, err := h.Content(n - 1)
	if err != nil {
		return nil, err
	}
	if lastContent == nil {
		return nil, fmt.Errorf("%s: deleted in %s: %w", path, state.ShortID(h.Entry(n-1).Commit), state.ErrNotFound)
	}
	if kind == KindTree && prefix != "" {
		if err := CheckPointer(prefix); err != nil {
			return nil, err
		}
	}
	if kind == KindMemory {
		vs := make([]Version, n)
		for i := range vs {
			c, err := h.Content(i)
			if err != nil {
				return nil, err
			}
			vs[i] = Version{Entry: h.Entry(i), Content: c}
		}
		return blameLines(vs), nil
	}
	keysOf := func(content []byte, hint int) (map[string]string, error) {
		if content == nil {
			return map[string]string{}, nil
		}
		if kind == KindGraph {
			return GraphItems(content), nil
		}
		doc, err := Decode(path, content)
		if err != nil {
			return nil, err
		}
		return leaves(doc, hint), nil
	}
	final, err := keysOf(lastContent, 0)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for k := range final {
		if prefix == "" || k == prefix || strings.HasPrefix(k, prefix+"/") {
			wanted[k] = true
		}
	}
	if prefix != "" && len(wanted) == 0 {
		return nil, fmt.Errorf("%s: %s: no such key in the last recorded version: %w", path, prefix, state.ErrNotFound)
	}
	run := make(map[string]int, len(wanted))   // key → oldest version of its run so far
	open := make(map[string]bool, len(wanted)) // keys whose run goes on
	restored := map[string]int{}               // key → the restore that began its run
	first := map[string]int{}                  // restored key → oldest version holding its value
	for k := range wanted {
		run[k], open[k] = n-1, true
	}
	prev, prevKeys := lastContent, final
	for i := n - 2; i >= 0 && (len(open) > 0 || len(restored) > 0); i-- {
		content, err := h.Content(i)
		if err != nil {
			content = nil // an unreadable past version: its keys are unknown
		}
		keys := prevKeys // the same bytes: the same keys
		if content == nil || prev == nil || string(content) != string(prev) {
			if keys, err = keysOf(content, len(final)); err != nil {
				keys = map[string]string{}
			}
		}
		holds := func(k string) bool {
			v, ok := keys[k]
			return ok && v == final[k]
		}
		for k := range open {
			if holds(k) {
				run[k] = i
				continue
			}
			delete(open, k)
			if h.Entry(run[k]).Source == state.SourceRestore {
				restored[k] = run[k]
			}
		}
		for k := range restored {
			if holds(k) {
				first[k] = i
			}
		}
		prev, prevKeys = content, keys
	}
	var out []BlameLine
	for _, k := range sortedKeys(wanted) {
		o := originOf(h.Entry(run[k]))
		if f, ok := first[k]; ok {
			o = originOf(h.Entry(f))
			o.Restored, o.RestoredBy = true, h.Entry(restored[k]).Commit
		}
		out = append(out, BlameLine{Key: k, Value: final[k], Origin: o})
	}
	return out, nil
}

// CheckPointer checks the syntax of a JSON Pointer (RFC 6901).
func CheckPointer(p string) error {
	if p != "" && !strings.HasPrefix(p, "/") {
		return fmt.Errorf("pointer %q: must be empty or start with /", p)
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return fmt.Errorf("pointer %q: ~ must be followed by 0 or 1", p)
		}
	}
	return nil
}

// blameLines blames each line of MEMORY.md as git blame does: lines a
// version kept (by a longest common subsequence with the one before) keep
// their origin. A line a restore brought back blames its first writer.
func blameLines(versions []Version) []BlameLine {
	type line struct {
		text string
		o    Origin
	}
	var cur []line
	seen := map[string]Origin{}
	for _, v := range versions {
		var texts []string
		if v.Content != nil {
			texts = strings.Split(strings.TrimSuffix(string(v.Content), "\n"), "\n")
		}
		old := make([]string, len(cur))
		for i, l := range cur {
			old[i] = l.text
		}
		match := lcs(old, texts)
		next := make([]line, len(texts))
		for j, t := range texts {
			if i, ok := match[j]; ok {
				next[j] = cur[i]
				continue
			}
			o := originOf(v.Entry)
			if first, ok := seen[t]; ok && v.Entry.Source == state.SourceRestore {
				o = first
				o.Restored, o.RestoredBy = true, v.Entry.Commit
			}
			if _, ok := seen[t]; !ok {
				seen[t] = originOf(v.Entry)
			}
			next[j] = line{t, o}
		}
		cur = next
	}
	out := make([]BlameLine, len(cur))
	for i, l := range cur {
		out[i] = BlameLine{Line: i + 1, Value: l.text, Origin: l.o}
	}
	return out
}

// lcs matches lines of b to equal lines of a (b index → a index), keeping
// order: a common prefix and suffix first, a longest common subsequence of
// what is left.
func lcs(a, b []string) map[int]int {
	m := map[int]int{}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		m[p] = p
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		m[len(b)-1-s] = len(a) - 1 - s
		s++
	}
	x, y := a[p:len(a)-s], b[p:len(b)-s]
	if len(x)*len(y) > 4_000_000 { // too large to match: the middle is new
		return m
	}
	t := make([][]int, len(x)+1)
	for i := range t {
		t[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i] == y[j]:
			m[p+j] = p + i
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return m
}
