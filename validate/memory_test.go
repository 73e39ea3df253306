package validate

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

// TestPositionIndexMemoryIsLinear feeds the shape of a long key repeated at
// every level of a deep document at two sizes: the bytes allocated to
// validate it grow with the input, not with depth² × key length as when
// positions were kept under whole JSON Pointers (10 KB of YAML reusing one
// key through an alias took 2.7 GB; that is an alias bomb now, see
// TestAliasedScalarsCostTheirLength).
func TestPositionIndexMemoryIsLinear(t *testing.T) {
	// n levels of a 1 000-byte key
	yamlDeep := func(n int) []byte {
		return []byte("a: " + strings.Repeat("{"+strings.Repeat("x", 1000)+": ", n) + "1" + strings.Repeat("}", n) + "\n")
	}
	// n levels of a 1 000-byte key, ending well-formed or not
	jsonDeep := func(end string) func(int) []byte {
		return func(n int) []byte {
			key := `"` + strings.Repeat("x", 1000) + `"`
			return []byte(strings.Repeat("{"+key+":", n) + "1" + strings.Repeat(end, n))
		}
	}
	cases := []struct {
		name, path, schema string
		doc                func(n int) []byte
		problem            string
	}{
		{"yaml", defaultPaths["phase-outcome"], "phase-outcome", yamlDeep, `missing required property "feature"`},
		{"json schema problem", ws, "workflow-state", jsonDeep("}"), `missing required property "type"`},
		{"json syntax error", ws, "json", jsonDeep("]"), `invalid JSON: unexpected character ']' after object value, want ',' or '}'`},
	}
	v := newValidator(t, Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			small, large := c.doc(50), c.doc(200)
			v.Validate(c.path, small, c.schema) // compiles the schema
			allocated := func(doc []byte) uint64 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ps := v.Validate(c.path, doc, c.schema)
				runtime.ReadMemStats(&after)
				assert.True(t, slices.ContainsFunc(ps, func(p state.Problem) bool { return p.Message == c.problem }),
					"%.300q", lines(ps))
				return after.TotalAlloc - before.TotalAlloc
			}
			a, b := allocated(small), allocated(large)
			in := float64(len(large)) / float64(len(small))
			assert.InDelta(t, 4, in, 0.2)
			t.Logf("%d→%d bytes in, %d→%d allocated (×%.1f)", len(small), len(large), a, b, float64(b)/float64(a))
			assert.Less(t, float64(b)/float64(a), 1.5*in,
				"%d bytes of input allocated %d, %d bytes allocated %d", len(small), a, len(large), b)
		})
	}
}

// TestAliasedScalarsCostTheirLength: a key or string repeated by aliases
// past the size of the file is an alias bomb, even when few values are
// made: each use is hashed and written into every problem about it.
func TestAliasedScalarsCostTheirLength(t *testing.T) {
	long := `"` + strings.Repeat("x", 100_000) + `"`
	for _, c := range []struct{ name, doc string }{
		// attack 15's 10 KB file: 3.6 MB of keys
		{"key at each level", "a: &k \"" + strings.Repeat("x", 4000) + "\"\nb: " +
			strings.Repeat("{*k : ", 900) + "1" + strings.Repeat("}", 900)},
		{"key of many mappings", "a: &k " + long + "\nb: [" + strings.Repeat("{*k : 1}, ", 1000) + "]"},
		{"value", "a: &k " + long + "\nb: [" + strings.Repeat("*k, ", 1000) + "]"},
		{"key inside an aliased mapping", "a: &m {" + strings.Repeat("x", 1000) + ": 1}\nb: [" +
			strings.Repeat("*m, ", 100) + "]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ps := DecodeYAML("x.yaml", []byte(c.doc))
			require.Len(t, ps, 1)
			assert.Equal(t, "YAML aliases expand to too many values (alias bomb)", ps[0].Message)
			assert.Greater(t, ps[0].Line, 0)
		})
	}

	v, ps := DecodeYAML("x.yaml", []byte("a: &k key\nb: {*k : 1}\nc: [*k, *k]\n"))
	require.Empty(t, ps)
	assert.Equal(t, map[string]any{"a": "key", "b": map[string]any{"key": json.Number("1")}, "c": []any{"key", "key"}}, v)
}
