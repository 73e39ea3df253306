package validate

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/strata-dev/strata/state"
)

// TestPositionIndexMemoryIsLinear feeds the shapes of a long key repeated at
// every level of a deep document (in YAML one anchored key reused as the key
// through an alias) at two sizes: the bytes allocated to validate them grow
// with the input, not with depth² × key length as when positions were kept
// under whole JSON Pointers (10 KB of YAML took 2.7 GB).
func TestPositionIndexMemoryIsLinear(t *testing.T) {
	// n levels of a 10n-byte key: ~17n bytes, four times larger for 4n
	yamlAliasKey := func(n int) []byte {
		return []byte("a: &k \"" + strings.Repeat("x", 10*n) + "\"\nb: " +
			strings.Repeat("{*k : ", n) + "1" + strings.Repeat("}", n) + "\n")
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
		{"yaml alias key", defaultPaths["phase-outcome"], "phase-outcome", yamlAliasKey, `missing required property "feature"`},
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
