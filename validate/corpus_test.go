package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

// corpusDir is the shared corpus of real-world state files, beside the
// repository; it is read in place and never copied into the repository.
var corpusDir = filepath.Join("..", "..", "shared", "corpus")

// corpusSchemas maps a corpus folder to the schema its files are checked
// against.
var corpusSchemas = map[string]string{
	"workflow-state": "workflow-state",
	"phase-outputs":  "phase-output",
	"handoff-yaml":   "phase-outcome",
	"mcp-memory":     "mcp-memory",
	"memory-md":      "markdown",
}

// corpusFiles returns the corpus files by folder, or skips the test.
func corpusFiles(t testing.TB) map[string][]string {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("corpus not found at %s: %v", corpusDir, err)
	}
	out := make(map[string][]string)
	for dir := range corpusSchemas {
		files, err := filepath.Glob(filepath.Join(corpusDir, dir, "*"))
		require.NoError(t, err)
		out[dir] = files
	}
	return out
}

// checkShape asserts the invariants every problem must hold: one clean line
// naming the file, a message, and a position unless it concerns the whole
// file.
func checkShape(t testing.TB, path string, ps state.Problems) {
	t.Helper()
	for _, p := range ps {
		line := p.Error()
		assert.Equal(t, path, p.Path, line)
		assert.NotEmpty(t, p.Message, line)
		assert.NotContains(t, line, "\n")
		assert.NotContains(t, line, "jsonschema")
		assert.NotContains(t, line, "strata.dev/schemas", "no schema URLs in messages")
		assert.GreaterOrEqual(t, p.Line, 0, line)
		assert.GreaterOrEqual(t, p.Col, 0, line)
		assert.True(t, p.Pointer == "" || strings.HasPrefix(p.Pointer, "/"), line)
		if p.Line == 0 {
			assert.Equal(t, "", p.Pointer, "only whole-file problems lack a position: %s", line)
		}
	}
}

func TestCorpus(t *testing.T) {
	v := newValidator(t, Options{})
	total, invalid := 0, 0
	for dir, files := range corpusFiles(t) {
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			path := filepath.ToSlash(f)
			ps := v.Validate(path, data, corpusSchemas[dir])
			checkShape(t, path, ps)
			for _, p := range ps {
				if dir != "memory-md" {
					assert.Greater(t, p.Line, 0, "corpus problems all have a position: %s", p.Error())
				}
			}
			total++
			if ps.Invalid() {
				invalid++
			}
			// Format-only modes never crash either.
			for _, mode := range []string{"json", "yaml", "jsonl-mcp", "markdown"} {
				checkShape(t, path, v.Validate(path, data, mode))
			}
		}
	}
	t.Logf("%d corpus files, %d fail the seed schemas", total, invalid)
	assert.Greater(t, total, 30)
}

// TestCorpusSnapshots pins a few exact lines from real files.
func TestCorpusSnapshots(t *testing.T) {
	corpusFiles(t)
	v := newValidator(t, Options{})
	cases := []struct{ file, schema, want string }{
		{"workflow-state/BuzzMaster__workflow-state.json", "workflow-state",
			`:2:11: /type: value must be one of "APEX", "ONESHOT", "DEBUG", "BRAINSTORM"`},
		{"workflow-state/BuzzMaster__workflow-state.json", "workflow-state",
			`:10:13: /phases: value must be array, got object`},
		{"workflow-state/bo1__workflow-state.json", "workflow-state",
			`:2:13: /status: value must be one of "in_progress", "completed"`},
		{"workflow-state/recall__workflow-state.json", "json",
			`:361:13: /phases/phase-2-shared-infra/tasks/2.2-shared-infrastructure/observaciones_no_bloqueantes: duplicate key "security-Info" (first at line 360)`},
		{"mcp-memory/ictserve__memory.jsonl", "mcp-memory",
			`:1:1: /: invalid JSON: unexpected character 'T' looking for a value`},
		{"mcp-memory/ucapture__dot-claude__memory.jsonl", "mcp-memory",
			`:1:37: /type: value must be one of "entity", "relation"`},
		{"phase-outputs/2026-01-31_llm_reasoning_2025__phase-01-query.json", "phase-output",
			`:2:14: /phase: value must be integer, got string`},
	}
	for _, c := range cases {
		path := filepath.ToSlash(filepath.Join(corpusDir, c.file))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Skipf("corpus file %s: %v", c.file, err)
		}
		assert.Contains(t, lines(v.Validate(path, data, c.schema)), path+c.want)
	}
	// Files in the official MCP format are valid.
	for _, f := range []string{"mindstrike__memory.jsonl", "fbr-repository__memory.jsonl", "home-assistant__memory.jsonl", "ontology-manager__memory.jsonl", "stellaris-mod__dot-claude__memory.jsonl"} {
		data, err := os.ReadFile(filepath.Join(corpusDir, "mcp-memory", f))
		require.NoError(t, err)
		assert.Empty(t, lines(v.Validate(f, data, "mcp-memory")), f)
	}
}
