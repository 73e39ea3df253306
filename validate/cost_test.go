package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nestedAnyOf is attack19-remote 4's schema: n levels of anyOf holding the
// same $ref twice, down to false; evaluating it is exponential in n.
func nestedAnyOf(n int) string {
	var defs []string
	for i := 0; i < n; i++ {
		defs = append(defs, fmt.Sprintf(`"a%d": {"anyOf": [{"$ref": "#/$defs/a%d"}, {"$ref": "#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"a%d": false`, n))
	return `{"$ref": "#/$defs/a0", "$defs": {` + strings.Join(defs, ", ") + `}}`
}

// TestCostlySchemaStops: a schema whose evaluation would be exponential
// stops at jsonschema.MaxEvaluations with one problem, in bounded time,
// instead of eating gigabytes (attack19-remote 4: 1.5 KB of schema ran a
// hook out of memory). A schema within the budget judges as before.
func TestCostlySchemaStops(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "costly.json"), []byte(nestedAnyOf(40)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cheap.json"), []byte(nestedAnyOf(4)), 0o644))
	v := newValidator(t, Options{Root: dir})
	start := time.Now()
	got := lines(v.Validate("x.json", []byte(`{"a": 1}`), "costly.json"))
	assert.Equal(t, []string{fmt.Sprintf("x.json: /: schema is too costly to evaluate for this file (over %d subschema evaluations); simplify its nesting of anyOf, oneOf and $ref", jsonschema.MaxEvaluations)}, got)
	assert.Less(t, time.Since(start), time.Minute) // 2^40 evaluations without the budget

	got = lines(v.Validate("x.json", []byte(`{"a": 1}`), "cheap.json"))
	require.Len(t, got, 1)
	assert.NotContains(t, got[0], "too costly")
}

// TestCostlyWorkCounts: a pattern over a long string and uniqueItems over a
// long array take budget by the size they go through, not as one
// evaluation each (attack19 verify-remote N7: 2^16 leaves, each matching a
// pattern against a 1 MB string, took ~20 minutes per file within the
// evaluation count).
func TestCostlyWorkCounts(t *testing.T) {
	dir := t.TempDir()
	var leaves []string
	for i := 0; i < 1<<8; i++ {
		leaves = append(leaves, `{"pattern": "^a*b$"}`)
	}
	schema := `{"anyOf": [` + strings.Join(leaves, ", ") + `]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pat.json"), []byte(schema), 0o644))
	v := newValidator(t, Options{Root: dir, MaxSize: 16 << 20})
	long := `"` + strings.Repeat("a", 1<<20) + `"` // 256 x 1 MB = 256 MB scanned without the charge
	defer func(n int) { jsonschema.MaxEvaluations = n }(jsonschema.MaxEvaluations)
	jsonschema.MaxEvaluations = 100_000 // 6.4 MB of pattern matching
	got := lines(v.Validate("x.json", []byte(long), "pat.json"))
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "schema is too costly to evaluate for this file")
}
