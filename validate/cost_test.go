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
	assert.Equal(t, []string{fmt.Sprintf("x.json: /: schema is too costly to evaluate for this file (over %d subschema evaluations: 2 a byte of the file, at least %d); simplify its nesting of anyOf, oneOf and $ref, or its largest patterns", jsonschema.MaxEvaluations, jsonschema.MaxEvaluations)}, got)
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

// TestLargeValidDocumentIsJudged: the evaluations a schema may take grow
// with the document (two a byte), so a large valid document is valid
// whatever its size (attack26 recheck F3: a valid 3.9 MB workflow-state of
// 300 000 phases was "too costly"), while a small one still stops an
// exponential schema (TestCostlySchemaStops). The fixed budget is lowered
// here to keep the document small.
func TestLargeValidDocumentIsJudged(t *testing.T) {
	defer func(n int) { jsonschema.MaxEvaluations = n }(jsonschema.MaxEvaluations)
	jsonschema.MaxEvaluations = 1000
	v := newValidator(t, Options{})
	doc := `{"type":"APEX","phase":"plan","lastUpdated":"2026-01-01T00:00:00Z","phases":[` +
		strings.TrimSuffix(strings.Repeat(`{"name":"p"},`, 2000), ",") + `]}`
	assert.Empty(t, lines(v.Validate(ws, []byte(doc), "workflow-state")))
}

// TestProblemsAreCapped: a file is named with at most MaxProblems
// problems, the first by position, and one line counting the rest
// (attack26 recheck F4: 390 000 lines for one handoff).
func TestProblemsAreCapped(t *testing.T) {
	v := newValidator(t, Options{})
	doc := `{"type":"APEX","phase":"plan","lastUpdated":"2026-01-01T00:00:00Z","phases":[` +
		strings.TrimSuffix(strings.Repeat("{\"name\":1},\n", 150), ",\n") + `]}`
	got := lines(v.Validate(ws, []byte(doc), "workflow-state"))
	require.Len(t, got, MaxProblems+1)
	assert.Equal(t, ws+`:1:86: /phases/0/name: value must be string, got number`, got[0])
	assert.Equal(t, ws+`:100:9: /phases/99/name: value must be string, got number`, got[MaxProblems-1])
	assert.Equal(t, ws+`: /: … and 50 more problems in this file (the first 100 are listed)`, got[MaxProblems])
}
