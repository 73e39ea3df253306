package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wants are ways to decode part of a document: nothing built, one member,
// members and elements along paths, and a whole subtree.
var wants = []*Want{
	{},
	{Keys: map[string]*Want{"a": {All: true}}},
	{Keys: map[string]*Want{"a": {Keys: map[string]*Want{"b": {All: true}}, Elems: map[int]*Want{1: {All: true}}}}, Elems: map[int]*Want{0: {Keys: map[string]*Want{"a": {All: true}}}}},
	{Keys: map[string]*Want{"k07": {All: true}, "x": {}}},
}

// checkDecodeFor requires DecodeJSONFor to fail exactly where DecodeJSON
// does, and to build what DecodeJSON builds where it builds anything.
func checkDecodeFor(t *testing.T, data []byte) {
	t.Helper()
	full, fps := DecodeJSON("f.json", data)
	for i, w := range wants {
		part, pps := DecodeJSONFor("f.json", data, w)
		require.Equal(t, fps.Invalid(), pps.Invalid(), "want %d, %q: DecodeJSON %v, DecodeJSONFor %v", i, data, fps, pps)
		if !fps.Invalid() {
			requireBuilt(t, full, part, w, fmt.Sprintf("want %d, %q", i, data))
		}
	}
}

// requireBuilt requires part to hold what full holds wherever w wants it.
func requireBuilt(t *testing.T, full, part any, w *Want, where string) {
	t.Helper()
	if w.All {
		require.Equal(t, full, part, where)
		return
	}
	switch f := full.(type) {
	case map[string]any:
		p, ok := part.(map[string]any)
		require.True(t, ok, "%s: %T for an object", where, part)
		require.LessOrEqual(t, len(p), len(f), where)
		for k, c := range w.Keys {
			fv, fok := f[k]
			pv, pok := p[k]
			require.Equal(t, fok, pok, "%s: member %q", where, k)
			if fok {
				requireBuilt(t, fv, pv, c, where+"/"+k)
			}
		}
	case []any:
		p, ok := part.([]any)
		require.True(t, ok, "%s: %T for an array", where, part)
		require.Len(t, p, len(f), where)
		for i, c := range w.Elems {
			if i < len(f) {
				requireBuilt(t, f[i], p[i], c, fmt.Sprintf("%s/%d", where, i))
			}
		}
	default:
		require.Equal(t, full, part, where) // a scalar on the way is built
	}
}

// TestDecodeJSONForDuplicates puts a duplicate key at every position of
// objects of 2 to 40 members, below and above the size where keys are
// compared through a table instead of one by one.
func TestDecodeJSONForDuplicates(t *testing.T) {
	for n := 2; n <= 40; n++ {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%02d", i)
		}
		doc := func(keys []string) []byte {
			var b strings.Builder
			b.WriteString(`{"x": 1, "a": [{"a": 0}, `)
			b.WriteString("{")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q: %d", k, i)
			}
			b.WriteString("}], \"k07\": {\"b\": [1, {\"c\": null}]}}")
			return []byte(b.String())
		}
		checkDecodeFor(t, doc(keys))
		for i := 1; i < n; i++ {
			dup := append([]string{}, keys...)
			dup[i] = keys[(i*7+3)%i] // an earlier key
			checkDecodeFor(t, doc(dup))
		}
	}
}

func FuzzDecodeJSONFor(f *testing.F) {
	addSeeds(f, ".json")
	for _, s := range []string{"", "{}", `{"a":[1,2,{"b":null}]}`, `{"a":1,"a":2}`, `[{"a":{"b":[]}},{"a":"\u00e9"}]`, `{"k07":{"x":{"y":[1e5,"\ud800"]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeFor)
}

// TestPooledParserAfterFailure decodes, one after another with the same
// pooled parsers, documents that fail with objects left open and documents
// that decode: nothing of a failed one reaches the next.
func TestPooledParserAfterFailure(t *testing.T) {
	bad := []byte(`{"a": {"b": 1, "c": [{"d": "x", "e": {"f": 2, "g": ` + strings.Repeat(`"h", `, 20))
	var big strings.Builder
	big.WriteString("{")
	for i := range 5000 { // grows the member stack past what the pool keeps
		fmt.Fprintf(&big, `"k%d": %d, `, i, i)
	}
	big.WriteString(`"end": true, "end": false}`)
	for i := 0; i < 50; i++ {
		for _, broken := range [][]byte{bad, []byte(big.String())} {
			if _, ps := DecodeJSON("f.json", broken); !ps.Invalid() {
				t.Fatalf("%.40q… decoded", broken)
			}
			if _, ps := DecodeJSONFor("f.json", broken, wants[1]); !ps.Invalid() {
				t.Fatalf("%.40q… decoded in part", broken)
			}
		}
		v, ps := DecodeJSON("f.json", []byte(`{"x": {"y": [1, {"z": null}]}}`))
		require.Empty(t, ps)
		require.Equal(t, map[string]any{"x": map[string]any{"y": []any{json.Number("1"), map[string]any{"z": nil}}}}, v)
	}
}
