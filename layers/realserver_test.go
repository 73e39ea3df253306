package layers

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/graph/mcptest"
	"github.com/strata-dev/strata/state"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.Cleanup()
	os.Exit(code)
}

// TestResolveFromRealServer: the published MCP memory server records a newer
// phase in the graph than the state file holds; strata resolve rewrites L1
// from it, records that with source resolve, and the server still reads the
// file afterwards.
func TestResolveFromRealServer(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("MEMORY_FILE_PATH", "")
	graphFile := filepath.Join(dir, ".claude", "memory.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(graphFile), 0o755))
	l1 := filepath.Join(dir, ".claude", "workflow-state.json")
	require.NoError(t, os.WriteFile(l1, []byte(`{"type": "APEX", "phase": "plan", "context": "auth", "lastUpdated": "2026-11-22T10:00:00Z"}`+"\n"), 0o644))

	srv := mcptest.Start(t, graphFile)
	srv.Tool("create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "workflow-state", "entityType": "workflow_state", "observations": []string{"type: APEX", "phase: plan", "context: auth", "updated: 2026-11-22T10:00:00Z"}},
		map[string]any{"name": "team-notes", "entityType": "note", "observations": []string{"written by the agent"}},
	}})
	eng, err := engine.Open(dir)
	require.NoError(t, err)
	record := func() {
		t.Helper()
		paths, err := eng.AllPaths()
		require.NoError(t, err)
		_, err = eng.Record(paths, state.SourceRecord)
		require.NoError(t, err)
	}
	record() // L1 and L3 agree, both recorded
	a := New(eng, func(string) {})
	item := func(res []Resolution) Resolution {
		t.Helper()
		for _, r := range res {
			if r.Item == "workflow-state" {
				return r
			}
		}
		t.Fatalf("no workflow-state item in %v", res)
		return Resolution{}
	}
	res, err := a.Resolve(false, func(string) {})
	require.NoError(t, err)
	assert.Equal(t, "consistent", item(res).Result)

	time.Sleep(1100 * time.Millisecond) // commit times have one-second resolution
	srv.Tool("add_observations", map[string]any{"observations": []any{
		map[string]any{"entityName": "workflow-state", "contents": []string{"phase: review", "updated: 2026-11-22T12:00:00Z"}},
	}})
	record() // the watcher would record the server's write

	var notes []string
	res, err = a.Resolve(false, func(line string) { notes = append(notes, line) })
	require.NoError(t, err)
	assert.Equal(t, "resolved", item(res).Result, "notes: %v", notes)
	assert.Equal(t, "L3", string(item(res).Winner))
	data, err := os.ReadFile(l1)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, "review", doc["phase"], "L1 takes the newer phase from L3")
	assert.Equal(t, "APEX", doc["type"])
	ents, err := eng.Log(state.LogQuery{Path: ".claude/workflow-state.json", Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, ents)
	assert.Equal(t, state.SourceResolve, ents[0].Source)

	// The server still reads the file, with its own entity and ours.
	text := srv.Tool("read_graph", map[string]any{})
	assert.Contains(t, text, "team-notes")
	assert.Contains(t, text, "phase: review")
	k, _ := eng.Config().Classify(".claude/workflow-state.json")
	f, p := eng.Read(k)
	require.Nil(t, p)
	assert.False(t, eng.Check(f, nil).Invalid(), "the rewritten L1 is valid")
}
