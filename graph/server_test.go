package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/graph/mcptest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.Cleanup()
	os.Exit(code)
}

// readGraph is the server's own view of the graph file.
func readGraph(t *testing.T, c *mcptest.Client) *Graph {
	var g struct {
		Entities  []Entity   `json:"entities"`
		Relations []Relation `json:"relations"`
	}
	text := c.Tool("read_graph", map[string]any{})
	require.NoError(t, json.Unmarshal([]byte(text), &g), "read_graph returned %q", text)
	return &Graph{Entities: g.Entities, Relations: g.Relations}
}

// TestRealServer runs the published memory server on a graph file while
// strata upserts its entities into the same file, many times over; neither
// may lose the other's writes, and the server must still read the file.
func TestRealServer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	// A file as users have them: another program's entity, a relation, no final newline.
	require.NoError(t, os.WriteFile(file, []byte(`{"type":"entity","name":"user-note","entityType":"note","observations":["keep me"]}`+"\n"+
		`{"type":"relation","from":"user-note","to":"workflow-state","relationType":"about"}`), 0o644))
	srv := mcptest.Start(t, file)
	settle = 100 * time.Millisecond
	defer func() { settle = time.Millisecond }()

	const rounds = 40
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the agent, through the server
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			name := fmt.Sprintf("srv-%d", i)
			srv.Tool("create_entities", map[string]any{"entities": []Entity{{Name: name, EntityType: "thing", Observations: []string{"created"}}}})
			srv.Tool("add_observations", map[string]any{"observations": []map[string]any{{"entityName": name, "contents": []string{fmt.Sprintf("seen %d", i)}}}})
		}
	}()
	var last Entity
	go func() { // strata's write protocol
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			last = Entity{Name: "workflow-state", EntityType: "workflow_state", Observations: []string{"type: APEX", fmt.Sprintf("phase: p%d", i), "context: \"quoted\" <b> & \u2028", fmt.Sprintf("updated: 2026-11-22T10:%02d:00Z", i)}}
			_, err := Upsert(file, []Entity{last, {Name: fmt.Sprintf("ours-%d", i), EntityType: "t", Observations: []string{}}})
			assert.NoError(t, err)
		}
	}()
	wg.Wait()

	g := readGraph(t, srv)
	var missing []string
	want := []string{"user-note", "workflow-state"}
	for i := 0; i < rounds; i++ {
		want = append(want, fmt.Sprintf("srv-%d", i), fmt.Sprintf("ours-%d", i))
	}
	for _, n := range want {
		if _, ok := g.Entity(n); !ok {
			missing = append(missing, n)
		}
	}
	assert.Empty(t, missing, "entities lost")
	for i := 0; i < rounds; i++ {
		e, _ := g.Entity(fmt.Sprintf("srv-%d", i))
		assert.Equal(t, []string{"created", fmt.Sprintf("seen %d", i)}, e.Observations, "observations of srv-%d", i)
	}
	e, _ := g.Entity("workflow-state")
	assert.Equal(t, last, e, "the server reads strata's last version")
	assert.Equal(t, []Relation{{"user-note", "workflow-state", "about"}}, g.Relations)

	// The server rewrites the file with JSON.stringify; strata's line for the
	// same entity is byte-identical, so the two never fight over formatting.
	srv.Tool("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "srv-0", "contents": []string{"last"}}}})
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(data), string(renderEntity(last))+"\n")
	changed, err := Upsert(file, []Entity{last})
	require.NoError(t, err)
	assert.False(t, changed)
}

// TestRenderAgainstNode checks appendJSString against node's JSON.stringify.
func TestRenderAgainstNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	inputs := []string{"plain", "a\"b\\c", "\b\t\n\f\r\v", "\x00\x01\x1f\x7f", "<a>&</a>", "\u2028\u2029", "é中文🙂", "/", "\u00ad\ufeff"}
	var b bytes.Buffer
	for _, in := range inputs {
		b.Write(appendJSString(nil, in))
		b.WriteByte('\n')
	}
	arg, _ := json.Marshal(inputs)
	out, err := exec.Command("node", "-e", `for (const s of JSON.parse(process.argv[1])) process.stdout.write(JSON.stringify(s) + "\n")`, string(arg)).Output()
	require.NoError(t, err)
	assert.Equal(t, string(out), b.String())
}
