package schemas

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	assert.Equal(t, []string{
		"decision-resolution", "delegation-log", "initiative", "interview-state",
		"mcp-memory-line", "phase-outcome", "phase-output", "workflow-state",
	}, Names())
}

func TestSchemasDeclareDraftAndID(t *testing.T) {
	for _, n := range Names() {
		b, ok := Get(n)
		require.True(t, ok, n)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(b, &doc), n)
		assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"], n)
		assert.Equal(t, ID(n), doc["$id"], n)
		assert.Equal(t, "https://strata.dev/schemas/"+n+".schema.json", ID(n))
		assert.NotContains(t, doc, "additionalProperties", "%s: unknown fields must stay allowed", n)
	}
}

func TestUnknown(t *testing.T) {
	_, ok := Get("nope")
	assert.False(t, ok)
	_, ok = Get("../schemas")
	assert.False(t, ok)
	assert.Equal(t, "", ID("nope"))
}

func TestExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Export(dir))
	require.NoError(t, Export(dir)) // idempotent
	for _, n := range Names() {
		got, err := os.ReadFile(filepath.Join(dir, n+".schema.json"))
		require.NoError(t, err)
		want, _ := Get(n)
		assert.Equal(t, want, got)
	}
}
