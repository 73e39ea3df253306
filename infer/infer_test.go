package infer_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/infer"
	"github.com/strata-dev/strata/validate"
)

// inferFiles infers a schema from files and checks that it accepts each.
func inferFiles(t *testing.T, files []string) map[string]any {
	t.Helper()
	var in infer.Inferrer
	datas := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		docs, ps := validate.DecodeDocs(f, data, "")
		if ps.Invalid() {
			t.Logf("not well-formed, left out: %s", ps.Error())
			continue
		}
		for _, d := range docs {
			in.Add(d)
		}
		datas[f] = data
	}
	schema := infer.Marshal(in.Schema("test"))
	for f, data := range datas {
		ps, err := validate.CheckAgainst(schema, f, data, "")
		require.NoError(t, err)
		assert.False(t, ps.Invalid(), "the inferred schema rejects %s: %v\n%s", f, ps, schema)
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(schema, &m))
	return m
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func TestInferWorkflowFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/workflow/*.json")
	require.Len(t, files, 3)
	s := inferFiles(t, files)
	assert.Equal(t, infer.Draft, s["$schema"])
	assert.Equal(t, "object", s["type"])
	assert.Nil(t, s["additionalProperties"], "left open")
	// present in every version; blocked_by only in one
	assert.ElementsMatch(t, []any{"feature", "flags", "mode", "phase", "started_at", "steps", "updated_at"}, s["required"])
	assert.Equal(t, "string", get(s, "properties", "blocked_by", "type"))
	// a small closed set that repeats: an enum; free text: none
	assert.Equal(t, []any{"APEX", "ONESHOT"}, get(s, "properties", "mode", "enum"))
	assert.Nil(t, get(s, "properties", "feature", "enum"))
	// date-time only where every value is one
	assert.Equal(t, "date-time", get(s, "properties", "started_at", "format"))
	assert.Nil(t, get(s, "properties", "updated_at", "format"))
	// arrays of objects, nested arrays, a null seen once
	item := get(s, "properties", "steps", "items").(map[string]any)
	assert.Equal(t, "object", item["type"])
	assert.ElementsMatch(t, []any{"id", "name", "status"}, item["required"])
	assert.Equal(t, "integer", get(item, "properties", "id", "type"))
	assert.Equal(t, "string", get(item, "properties", "files", "items", "type"))
	assert.Equal(t, "null", get(item, "properties", "notes", "type"))
	assert.Equal(t, []any{"done", "in_progress", "pending"}, get(item, "properties", "status", "enum"))
	// 0.75 and 1: number, not integer
	assert.Equal(t, "number", get(s, "properties", "flags", "properties", "budget", "type"))
	assert.Equal(t, []any{"auto_commit"}, get(s, "properties", "flags", "required"))
}

func TestInferHandoffYAML(t *testing.T) {
	files, _ := filepath.Glob("testdata/handoff/*.y*ml")
	require.Len(t, files, 3)
	s := inferFiles(t, files)
	assert.ElementsMatch(t, []any{"completed", "date", "next_steps", "session", "status", "summary"}, s["required"])
	assert.Equal(t, "date-time", get(s, "properties", "date", "format"))
	assert.Equal(t, []any{"blocked", "in-progress"}, get(s, "properties", "status", "enum"))
	assert.Equal(t, "integer", get(s, "properties", "context", "properties", "tokens_used", "type"))
	q := get(s, "properties", "open_questions", "items").(map[string]any)
	assert.Equal(t, "string", get(q, "properties", "options", "items", "type"))
	c := get(s, "properties", "completed", "items").(map[string]any)
	assert.ElementsMatch(t, []any{"task"}, c["required"])
}

func TestInferMixedTypesAndNullableEnum(t *testing.T) {
	var in infer.Inferrer
	for _, d := range []any{
		map[string]any{"a": "x", "b": json.Number("1"), "c": []any{}},
		map[string]any{"a": "x", "b": "one", "c": []any{}},
		map[string]any{"a": nil, "b": true},
	} {
		in.Add(d)
	}
	s := in.Schema("c")
	assert.Equal(t, []string{"null", "string"}, s.Properties["a"].Type)
	assert.Equal(t, []any{"x", nil}, s.Properties["a"].Enum)
	assert.Equal(t, []string{"boolean", "integer", "string"}, s.Properties["b"].Type)
	assert.Nil(t, s.Properties["b"].Enum, "an enum would refuse the other types' values")
	assert.Nil(t, s.Properties["c"].Items, "never an element: items open")
	assert.Equal(t, []string{"a", "b"}, s.Required)
}

func TestIsDateTime(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-11-22T09:30:00Z":      true,
		"2026-11-22t09:30:00.123z":  true,
		"2026-11-22T09:30:00+05:30": true,
		"2026-11-22":                false,
		"2026-11-22 09:30:00Z":      false,
		"2026-13-22T09:30:00Z":      false,
		"2026-11-22T09:30:00":       false,
		"yesterday":                 false,
		"2026-11-22T09:30:00.Z":     false,
	} {
		assert.Equal(t, want, infer.IsDateTime(s), s)
	}
}

// TestInferCorpus infers one schema per folder of the shared corpus of real
// users' files and checks that it accepts every file of the folder.
func TestInferCorpus(t *testing.T) {
	// beside the repository (../shared/corpus), or beside a worktree's parent
	dir := filepath.Join("..", "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		if _, err2 := os.Stat(filepath.Join("..", dir)); err2 != nil {
			t.Skipf("corpus not found at %s: %v", dir, err)
		}
		dir = filepath.Join("..", dir)
	}
	folders, _ := filepath.Glob(filepath.Join(dir, "*"))
	n := 0
	for _, folder := range folders {
		files, _ := filepath.Glob(filepath.Join(folder, "*"))
		var keep []string
		for _, f := range files {
			if validate.FormatOf(f) != "" && !strings.HasSuffix(f, ".md") {
				keep = append(keep, f)
			}
		}
		if len(keep) == 0 {
			continue
		}
		t.Run(filepath.Base(folder), func(t *testing.T) {
			inferFiles(t, keep)
		})
		n += len(keep)
	}
	t.Logf("%d corpus files", n)
}
