package semantic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

func ver(commit string, src state.Source, content string) Version {
	t := time.Date(2026, 11, 22, 9, len(commit), 0, 0, time.UTC)
	v := Version{Entry: state.Entry{Commit: commit, Time: t, Source: src}}
	if content != "" {
		v.Content = []byte(content)
	}
	return v
}

func TestBlameTreeRestore(t *testing.T) {
	vs := []Version{
		ver("a", state.SourceRecord, `{"phase":"plan","n":1}`),
		ver("bb", state.SourceRecord, `{"n":1, "phase":"implement"}`),
		ver("ccc", state.SourceRestore, `{"phase":"plan","n":1}`),
	}
	out, err := Blame("x.json", KindTree, Versions(vs), "")
	require.NoError(t, err)
	require.Equal(t, []BlameLine{
		{Key: "/n", Value: "1", Origin: Origin{Commit: "a", Time: vs[0].Entry.Time, Source: state.SourceRecord}},
		{Key: "/phase", Value: `"plan"`, Origin: Origin{Commit: "a", Time: vs[0].Entry.Time, Source: state.SourceRecord, Restored: true, RestoredBy: "ccc"}},
	}, out)
}

func TestBlameLines(t *testing.T) {
	vs := []Version{
		ver("a", state.SourceRecord, "x\ny\n"),
		ver("bb", state.SourceRecord, "x\nnew\ny\n"),
	}
	out, err := Blame("MEMORY.md", KindMemory, Versions(vs), "")
	require.NoError(t, err)
	got := []string{}
	for _, l := range out {
		got = append(got, l.Commit+":"+l.Value)
	}
	require.Equal(t, []string{"a:x", "bb:new", "a:y"}, got)
}

func TestDiffTree(t *testing.T) {
	a := `{"phase":"plan","phases":[{"n":1},{"n":2}],"enforcement":{"blocking":false}}`
	b := "phases:\n  - {n: 1}\n  - {n: 2}\n  - {n: 3}\nphase: implement\n"
	ch, err := Diff("x.yaml", KindTree, []byte(a), []byte(b))
	require.NoError(t, err)
	var got []string
	for _, c := range ch {
		got = append(got, c.String())
	}
	require.Equal(t, []string{"- /enforcement", `/phase: "plan" → "implement"`, "+ /phases/2"}, got)
	same, err := Diff("x.json", KindTree, []byte(`{"a":1,"b":[1,2]}`), []byte("{ \"b\": [1, 2],\n  \"a\": 1 }"))
	require.NoError(t, err)
	require.Empty(t, same)
}

func TestDiffMemoryAndGraph(t *testing.T) {
	ch := diffItems(memoryGroups([]byte("# M\n## A\n- x\n## B\n- y\n")), memoryGroups([]byte("# M\n## A\n- x\n- z\n## C\n")))
	require.Equal(t, []Change{{Op: "-", Key: "## M > B"}, {Op: "~", Key: "## M > A", Added: []string{"- z"}}, {Op: "+", Key: "## M > C"}}, ch)
	g := diffItems(graphGroups([]byte(`{"type":"entity","name":"p","observations":["a"]}`)), graphGroups([]byte(`{"type":"entity","name":"p","observations":["b"]}`)))
	require.Equal(t, []Change{{Op: "~", Key: "entity p", Added: []string{"b"}, Removed: []string{"a"}}}, g)
}

// forward is the plain definition of a key's blame, walking forward: a
// change gives the key its commit; a restore that brings back a value the
// key held before gives it the commit that first wrote that value.
func forward(vs []Version) map[string]Origin {
	type cur struct {
		val string
		o   Origin
	}
	now := map[string]cur{}
	seen := map[string]map[string]Origin{}
	for _, v := range vs {
		keys := map[string]string{}
		if v.Content != nil {
			doc, _ := Decode("x.json", v.Content)
			keys = Leaves(doc)
		}
		next := map[string]cur{}
		for k, val := range keys {
			if c, ok := now[k]; ok && c.val == val {
				next[k] = c
				continue
			}
			o := originOf(v.Entry)
			if f, ok := seen[k][val]; ok && v.Entry.Source == state.SourceRestore {
				o = f
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
		now = next
	}
	out := map[string]Origin{}
	for k, c := range now {
		out[k] = c.o
	}
	return out
}

// The backward walk agrees with the forward definition on random histories
// of small values, deletions and restores.
func TestBlameMatchesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 3000; trial++ {
		var vs []Version
		for i := 0; i < 2+r.IntN(25); i++ {
			src := state.SourceRecord
			if r.IntN(4) == 0 {
				src = state.SourceRestore
			}
			content := fmt.Sprintf(`{"a": %d, "b": %d}`, r.IntN(3), r.IntN(2))
			if r.IntN(6) == 0 {
				content = fmt.Sprintf(`{"a": %d}`, r.IntN(3))
			}
			if r.IntN(10) == 0 && i > 0 {
				content = ""
			}
			vs = append(vs, Version{Entry: state.Entry{Commit: fmt.Sprintf("c%02d", i), Source: src}, Content: []byte(content)})
			if content == "" {
				vs[len(vs)-1].Content = nil
			}
		}
		if vs[len(vs)-1].Content == nil {
			continue
		}
		got, err := Blame("x.json", KindTree, Versions(vs), "")
		require.NoError(t, err)
		want := forward(vs)
		require.Len(t, got, len(want))
		for _, l := range got {
			require.Equal(t, want[l.Key], l.Origin, "trial %d key %s", trial, l.Key)
		}
	}
}

// TestLeafAtIsLeaves: on random nested documents (keys holding "/", "~" and
// digits, arrays, empty containers), leafAt finds at each pointer exactly
// what Leaves gives it, and nothing at a pointer Leaves does not list (a
// container's own pointer, a key or index that is not there, "01").
func TestLeafAtIsLeaves(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	gen := randomDoc(r)
	for trial := 0; trial < 2000; trial++ {
		doc := gen(0)
		want := Leaves(doc)
		for _, p := range probesOf(want) {
			got, ok := leafAt(doc, p)
			w, wok := want[p]
			require.Equal(t, wok, ok, "trial %d pointer %q in %#v", trial, p, doc)
			require.Equal(t, w, got, "trial %d pointer %q", trial, p)
		}
	}
}

// probesOf is the pointers of leaves, and the pointers next to them that
// are not leaves: a container's own, a key or index that is not there, "01".
func probesOf(leaves map[string]string) []string {
	probes := []string{"", "/", "/01", "/a/0", "/x"}
	for p := range leaves {
		probes = append(probes, p, p+"/0", p+"/a")
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			probes = append(probes, p[:i]) // the container holding it
		}
	}
	return probes
}

// TestDecodeForIsDecode checks the partial decode a blame reads old
// versions with: for random documents and random sets of pointers, leafAt
// gives the same answer on what decodeFor builds as on Decode's whole
// document, and, for the same documents with a byte changed, decodeFor
// fails exactly when Decode does.
func TestDecodeForIsDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	gen := randomDoc(r)
	noise := []byte(`{}[],:"\0-1e.tfnu ` + "\x00\xff")
	for trial := 0; trial < 3000; trial++ {
		text, err := json.MarshalIndent(gen(0), "", " ")
		require.NoError(t, err)
		if trial%3 == 1 { // a duplicate key, or a byte out of place
			text = append([]byte{}, text...)
			text[r.IntN(len(text))] = noise[r.IntN(len(noise))]
		} else if trial%3 == 2 && bytes.Count(text, []byte(`"a"`)) > 0 {
			text = bytes.Replace(text, []byte(`"b/c"`), []byte(`"a"`), 1)
		}
		full, ferr := Decode("f.json", text)
		probes := []string{"", "/a", "/0/a"}
		if ferr == nil {
			probes = probesOf(Leaves(full))
		}
		for n := 0; n < 4; n++ {
			set := map[string]bool{}
			for i := r.IntN(4); i >= 0; i-- {
				set[probes[r.IntN(len(probes))]] = true
			}
			part, perr := decodeFor("f.json", text, wantOf(maps.Keys(set)))
			require.Equal(t, ferr == nil, perr == nil, "trial %d %q: Decode %v, decodeFor %v", trial, text, ferr, perr)
			if ferr != nil {
				continue
			}
			for p := range set {
				got, ok := leafAt(part, p)
				w, wok := leafAt(full, p)
				require.Equal(t, wok, ok, "trial %d pointer %q in %s", trial, p, text)
				require.Equal(t, w, got, "trial %d pointer %q in %s", trial, p, text)
			}
		}
	}
}

// randomDoc makes random nested documents with awkward keys.
func randomDoc(r *rand.Rand) func(depth int) any {
	keys := []string{"a", "b/c", "~0", "~1x", "0", "1", "", "k~"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := r.IntN(7); {
		case depth > 3 || n < 3:
			return []any{nil, true, json.Number("1"), json.Number("-2.5e3"), "s", "x\"y", ""}[r.IntN(7)]
		case n < 5:
			m := map[string]any{}
			for i := r.IntN(4); i > 0; i-- {
				m[keys[r.IntN(len(keys))]] = gen(depth + 1)
			}
			return m
		default:
			a := []any{}
			for i := r.IntN(4); i > 0; i-- {
				a = append(a, gen(depth+1))
			}
			return a
		}
	}
	return gen
}
