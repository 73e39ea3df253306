package semantic

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
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

// History is a file's recorded versions, counted back from the last one
// (0 is the last), whose entries and bytes are read on demand: a blame reads
// only as far back as its answer needs.
type History interface {
	// Entry is the i-th version back from the last; ok is false past the
	// first version ever recorded.
	Entry(i int) (e state.Entry, ok bool, err error)
	// Content is that version's bytes (nil for a deletion), for an i Entry
	// has given.
	Content(i int) ([]byte, error)
}

// Versions is a History held in memory, oldest first.
type Versions []Version

func (vs Versions) Entry(i int) (state.Entry, bool, error) {
	if i >= len(vs) {
		return state.Entry{}, false, nil
	}
	return vs[len(vs)-1-i].Entry, true, nil
}

func (vs Versions) Content(i int) ([]byte, error) { return vs[len(vs)-1-i].Content, nil }

// Blame gives each key or line of the last version the commit that gave it
// its value. A value a restore brought back blames the commit that first
// wrote it, marked restored. prefix, for a tree, keeps only the keys at or
// under that JSON Pointer; a pointer naming nothing is an error.
//
// Keys are blamed walking back from the last version: a key's origin is the
// oldest version of the unbroken run of versions holding its current value,
// so the walk stops once every key's run has ended (a restored key's walk
// goes on to the first version that ever held the value). MEMORY.md lines
// are blamed walking back too (blameLines), with the answers of git blame's
// forward walk.
func Blame(path string, kind Kind, h History, prefix string) ([]BlameLine, error) {
	last, ok, err := h.Entry(0)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: no versions", path)
	}
	lastContent, err := h.Content(0)
	if err != nil {
		return nil, err
	}
	if lastContent == nil {
		return nil, fmt.Errorf("%s: deleted in %s: %w", path, state.ShortID(last.Commit), state.ErrNotFound)
	}
	if kind == KindTree && prefix != "" {
		if err := CheckPointer(prefix); err != nil {
			return nil, err
		}
	}
	// entry is the i-th version back, which the walk has already reached
	entry := func(i int) state.Entry { e, _, _ := h.Entry(i); return e }
	if kind == KindMemory {
		return blameLines(h, lastContent)
	}
	var final map[string]string // each key of the last version, with its value
	if kind == KindGraph {
		final = GraphItems(lastContent)
	} else {
		doc, err := Decode(path, lastContent)
		if err != nil {
			return nil, err
		}
		final = Leaves(doc)
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
	// versions are counted back from the last (0)
	run := make(map[string]int, len(wanted))   // key → oldest version of its run so far
	open := make(map[string]bool, len(wanted)) // keys whose run goes on
	restored := map[string]int{}               // key → the restore that began its run
	first := map[string]int{}                  // restored key → oldest version holding its value
	for k := range wanted {
		run[k], open[k] = 0, true
	}
	// valueIn looks a key up in one past version: a tree is decoded, not
	// flattened, since only the keys whose runs go on are looked up, and a
	// JSON one is built only along those keys (want, made again when they
	// change)
	none := func(string) (string, bool) { return "", false }
	var want *validate.Want
	valueIn := func(content []byte) func(string) (string, bool) {
		if content == nil {
			return none
		}
		if kind == KindGraph {
			items := GraphItems(content)
			return func(k string) (string, bool) { v, ok := items[k]; return v, ok }
		}
		if want == nil {
			want = wantOf(maps.Keys(open), maps.Keys(restored))
		}
		doc, err := decodeFor(path, content, want)
		if err != nil {
			return none
		}
		return func(k string) (string, bool) { return leafAt(doc, k) }
	}
	// the values of the last few versions read, by their bytes (the same
	// bytes: the same values), the last version's being final's: a history
	// that goes back and forth between a few versions decodes each once
	var values recent[string, func(string) (string, bool)]
	values.put(string(lastContent), func(k string) (string, bool) { v, ok := final[k]; return v, ok })
	for i := 1; len(open) > 0 || len(restored) > 0; i++ {
		if _, ok, err := h.Entry(i); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		content, err := h.Content(i)
		switch {
		case errors.Is(err, state.ErrTooLarge):
			content = nil // a version over max_size is never read: its keys are unknown
		case err != nil:
			// an unreadable version (a missing object): which keys it held
			// is not known, so neither is where their runs began
			return nil, err
		}
		value := none
		if content != nil {
			var known bool
			key := string(content)
			if value, known = values.get(key); !known {
				value = valueIn(content)
				values.put(key, value)
			}
		}
		holds := func(k string) bool {
			v, ok := value(k)
			return ok && v == final[k]
		}
		for k := range open {
			if holds(k) {
				run[k] = i
				continue
			}
			delete(open, k)
			want = nil
			if entry(run[k]).Source == state.SourceRestore {
				restored[k] = run[k]
			}
		}
		for k := range restored {
			if holds(k) {
				first[k] = i
			}
		}
	}
	var out []BlameLine
	for _, k := range sortedKeys(wanted) {
		o := originOf(entry(run[k]))
		if f, ok := first[k]; ok {
			o = originOf(entry(f))
			o.Restored, o.RestoredBy = true, entry(restored[k]).Commit
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

// blameLines blames each line of MEMORY.md's last version (lastContent) as
// git blame does: a line a version kept from the one before it (matched by
// lcs) keeps its origin; a line a version added is that version's; a line a
// restore added blames the first version that ever held that text, or, when
// none before held it but the line appears earlier in the same version, the
// restore itself, marked restored.
//
// It walks back from the last version, following each line to the version
// that added it, and stops once every line has its answer (a restored
// line's walk goes on to the first version of all). It holds two versions
// at a time and remembers the matches of the last few pairs of versions,
// so a history that goes back and forth between a few versions costs a
// comparison per version, not a longest common subsequence. An unreadable version reached is an error.
func blameLines(h History, lastContent []byte) ([]BlameLine, error) {
	newer, final := versionLines(lastContent)
	at := make([]int, len(final))    // line → where it is in the version the walk holds; -1 once added
	added := make([]int, len(final)) // line → the version that added it
	for f := range at {
		at[f] = f
	}
	open := len(final)
	// pending: the text of each line a restore added → the oldest version
	// read since that holds it (-1: none yet); sameVersion: lines whose text
	// the restore also holds on an earlier line
	pending := map[string]int{}
	sameVersion := make([]bool, len(final))
	var matches recent[[2]string, map[int]int] // lcs(older, newer) by the versions' bytes
	// entry is the i-th version back, which the walk has already reached
	entry := func(i int) state.Entry { e, _, _ := h.Entry(i); return e }
	newerLines := final
	for i := 0; open > 0 || len(pending) > 0; i++ {
		_, ok, err := h.Entry(i + 1)
		if err != nil {
			return nil, err
		}
		var older string
		var olderLines []string // nil: version i+1 deletes the file, or there is none
		if ok {
			c, err := h.Content(i + 1)
			if err != nil {
				return nil, err
			}
			older, olderLines = versionLines(c)
		}
		if open > 0 {
			restore := entry(i).Source == state.SourceRestore
			var match map[int]int // newer's line → older's, for the lines older kept
			if olderLines != nil {
				var known bool
				if match, known = matches.get([2]string{older, newer}); !known {
					match = lcs(olderLines, newerLines)
					matches.put([2]string{older, newer}, match)
				}
			}
			for f, p := range at {
				if p < 0 {
					continue
				}
				if q, kept := match[p]; kept {
					at[f] = q
					continue
				}
				at[f], added[f] = -1, i
				open--
				if !restore {
					continue
				}
				t := newerLines[p]
				sameVersion[f] = slices.Contains(newerLines[:p], t)
				if _, ok := pending[t]; !ok {
					pending[t] = -1
				}
			}
		}
		if !ok {
			break
		}
		if len(pending) > 0 {
			for _, l := range olderLines {
				if _, ok := pending[l]; ok {
					pending[l] = i + 1
				}
			}
		}
		newer, newerLines = older, olderLines
	}
	out := make([]BlameLine, len(final))
	for f, t := range final {
		a := entry(added[f])
		o := originOf(a)
		if a.Source == state.SourceRestore {
			if first := pending[t]; first > added[f] {
				o = originOf(entry(first))
				o.Restored, o.RestoredBy = true, a.Commit
			} else if sameVersion[f] {
				o.Restored, o.RestoredBy = true, a.Commit
			}
		}
		out[f] = BlameLine{Line: f + 1, Value: t, Origin: o}
	}
	return out, nil
}

// versionLines is a MEMORY.md version's text and its lines (nil for a
// deletion).
func versionLines(content []byte) (string, []string) {
	if content == nil {
		return "", nil
	}
	s := string(content)
	return s, strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// recent holds what was made of the last few keys asked for: a walk over
// a history that goes back and forth between a few versions makes it once
// per version (or pair of versions), not once per step.
type recent[K comparable, V any] struct {
	keys [4]K
	vals [4]V
	n    int // slots filled
	next int // the slot put fills next
}

func (r *recent[K, V]) get(k K) (V, bool) {
	for i := range r.n {
		if r.keys[i] == k {
			return r.vals[i], true
		}
	}
	var zero V
	return zero, false
}

func (r *recent[K, V]) put(k K, v V) {
	r.keys[r.next], r.vals[r.next] = k, v
	r.next = (r.next + 1) % len(r.keys)
	r.n = min(r.n+1, len(r.keys))
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
