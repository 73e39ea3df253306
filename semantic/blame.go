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
	return Origin{Commit: e.Commit, Time: e.Time, Source: e.Source}
}

// Blame gives each key or line of the last version the commit that gave it
// its value. A value a restore brought back blames the commit that first
// wrote it, marked restored. prefix, for a tree, keeps only the keys at or
// under that JSON Pointer; a pointer naming nothing is an error.
func Blame(path string, kind Kind, versions []Version, prefix string) ([]BlameLine, error) {
	if len(versions) == 0 {
		return nil, fmt.Errorf("%s: no versions", path)
	}
	last := versions[len(versions)-1]
	if last.Content == nil {
		return nil, fmt.Errorf("%s: deleted in %s: %w", path, state.ShortID(last.Entry.Commit), state.ErrNotFound)
	}
	if kind == KindMemory {
		return blameLines(versions), nil
	}
	keysOf := func(v Version) (map[string]string, error) {
		if v.Content == nil {
			return map[string]string{}, nil
		}
		if kind == KindGraph {
			return GraphItems(v.Content), nil
		}
		doc, err := Decode(path, v.Content)
		if err != nil {
			return nil, err
		}
		return Leaves(doc), nil
	}
	type cur struct {
		value string
		o     Origin
	}
	now := map[string]cur{}
	seen := map[string]map[string]Origin{} // key → value → first origin
	var final map[string]string
	var prev []byte
	for i, v := range versions {
		if i > 0 && v.Content != nil && prev != nil && string(v.Content) == string(prev) {
			continue // the same bytes: the same keys and origins
		}
		prev = v.Content
		keys, err := keysOf(v)
		if err != nil {
			if i == len(versions)-1 {
				return nil, err
			}
			keys = map[string]string{} // an unreadable past version: its keys are unknown
		}
		next := map[string]cur{}
		for k, val := range keys {
			if c, ok := now[k]; ok && c.value == val {
				next[k] = c
				continue
			}
			o := originOf(v.Entry)
			if first, ok := seen[k][val]; ok && v.Entry.Source == state.SourceRestore {
				o = first
				o.Restored, o.RestoredBy = true, v.Entry.Commit
			}
			if seen[k] == nil {
				seen[k] = map[string]Origin{}
			}
			if _, ok := seen[k][val]; !ok {
				seen[k][val] = originOf(v.Entry)
			}
			next[k] = cur{val, o}
		}
		now, final = next, keys
	}
	if kind == KindTree && prefix != "" {
		if err := CheckPointer(prefix); err != nil {
			return nil, err
		}
	}
	var out []BlameLine
	for _, k := range sortedKeys(final) {
		if prefix != "" && k != prefix && !strings.HasPrefix(k, prefix+"/") {
			continue
		}
		out = append(out, BlameLine{Key: k, Value: now[k].value, Origin: now[k].o})
	}
	if prefix != "" && len(out) == 0 {
		return nil, fmt.Errorf("%s: %s: no such key in the last recorded version: %w", path, prefix, state.ErrNotFound)
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
