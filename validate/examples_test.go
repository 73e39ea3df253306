package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A draft of 50 000 properties, as schema infer makes of an object of
// 50 000 keys, is checked: its check against the metaschema (about 16
// evaluations a subschema) ran out of the fixed budget, and schema infer
// called that a bug in strata (attack34 L4a); the budget now grows with
// the schema.
func TestCheckAgainstLargeSchema(t *testing.T) {
	const n = 50_000
	props := make(map[string]any, n)
	var doc strings.Builder
	doc.WriteString("{")
	for i := range n {
		props[fmt.Sprintf("k%d", i)] = map[string]any{"type": "integer"}
		if i > 0 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, `"k%d":%d`, i, i)
	}
	doc.WriteString("}")
	schema, err := json.Marshal(map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props})
	require.NoError(t, err)
	ps, err := CheckAgainst(schema, "k.json", []byte(doc.String()), "")
	require.NoError(t, err)
	assert.Empty(t, ps)
	ps, err = CheckAgainst(schema, "k.json", []byte(`{"k1": "x"}`), "")
	require.NoError(t, err)
	assert.True(t, ps.Invalid(), "still checked")
}

// A check that stops at the evaluation budget is an error, ErrTooCostly,
// never a problem of the file: neither valid nor not.
func TestCheckAgainstTooCostly(t *testing.T) {
	schema := `{"$defs": {` + defsChain(24) + `}, "$ref": "#/$defs/d0"}`
	ps, err := CheckAgainst([]byte(schema), "x.json", []byte(`1`), "")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrTooCostly), "%v", err)
	assert.Empty(t, ps)
}

// defsChain is d0 … dN, each an anyOf of two $refs to the next one (the
// last a string): 2^N evaluations for a value that is none.
func defsChain(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"d%d": {"anyOf": [{"$ref": "#/$defs/d%d"}, {"$ref": "#/$defs/d%d"}]}, `, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d": {"type": "string"}`, n)
	return b.String()
}

// A pattern is charged for its program's size as well as the string's
// (attack34c: `(?:a|b){0,1000}c`, about 4 000 instructions, reached 256
// times through $refs of a 654-byte committed schema, took minutes on a
// 100 KB string, charged a step for every 64 bytes as a pattern of a few
// instructions is). One such match against 300 KB is past the budget: an
// error, ErrTooCostly, at once (it took seconds to run, and passed).
func TestCheckAgainstCostlyPattern(t *testing.T) {
	schema := `{"properties": {"k": {"pattern": "(?:a|b){0,1000}c"}}}`
	doc := `{"k": "` + strings.Repeat("a", 300_000) + `"}`
	ps, err := CheckAgainst([]byte(schema), "k.json", []byte(doc), "")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrTooCostly), "%v", err)
	assert.Empty(t, ps)
	// a pattern of a few instructions on the same string is checked
	ps, err = CheckAgainst([]byte(`{"properties": {"k": {"pattern": "^a+c$"}}}`), "k.json", []byte(doc), "")
	require.NoError(t, err)
	assert.True(t, ps.Invalid())
	// and so are patternProperties, against each key
	keys := `{"properties": {"k": {"patternProperties": {"(?:a|b){0,1000}c": true}}}}`
	var b strings.Builder
	b.WriteString(`{"k": {`)
	for i := range 3000 {
		fmt.Fprintf(&b, `"%s%d": 1, `, strings.Repeat("a", 100), i)
	}
	b.WriteString(`"z": 1}}`)
	_, err = CheckAgainst([]byte(keys), "k.json", []byte(b.String()), "")
	assert.True(t, errors.Is(err, ErrTooCostly), "%v", err)
}
