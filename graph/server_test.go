package graph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference server is installed from npm once per test run.
var (
	serverOnce sync.Once
	serverDir  string
	serverSkip string // why the server cannot be used here
)

func TestMain(m *testing.M) {
	code := m.Run()
	if serverDir != "" {
		os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

// networkFailure matches npm's messages for a registry it cannot reach.
var networkFailure = regexp.MustCompile(`ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|network|proxy|socket hang up|timed out`)

// memoryServer returns the path of the installed server's dist/index.js,
// skipping the test when node or npm is missing or the registry cannot be
// reached.
func memoryServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not installing @modelcontextprotocol/server-memory from npm")
	}
	serverOnce.Do(func() {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				serverSkip = tool + " is not on PATH: cannot run @modelcontextprotocol/server-memory"
				return
			}
		}
		dir, err := os.MkdirTemp("", "strata-server-memory-")
		if err != nil {
			serverSkip = err.Error()
			return
		}
		serverDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", "@modelcontextprotocol/server-memory")
		out, err := cmd.CombinedOutput()
		if err != nil {
			if ctx.Err() != nil || networkFailure.Match(out) {
				serverSkip = fmt.Sprintf("npm cannot reach the registry to install @modelcontextprotocol/server-memory: %v\n%s", err, out)
				return
			}
			serverSkip = "FAIL: npm install @modelcontextprotocol/server-memory: " + err.Error() + "\n" + string(out)
		}
	})
	if strings.HasPrefix(serverSkip, "FAIL: ") {
		t.Fatal(strings.TrimPrefix(serverSkip, "FAIL: "))
	}
	if serverSkip != "" {
		t.Skip(serverSkip)
	}
	return filepath.Join(serverDir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
}

// mcpClient speaks JSON-RPC 2.0 over the server's stdio, one message a line.
type mcpClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	nextID int
	stderr bytes.Buffer
}

func startServer(t *testing.T, file string) *mcpClient {
	index := memoryServer(t)
	c := &mcpClient{t: t}
	c.cmd = exec.Command("node", index)
	c.cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	c.cmd.Stderr = &c.stderr
	var err error
	c.in, err = c.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(make([]byte, 1<<20), 64<<20)
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() {
		c.in.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	})
	c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "strata-test", "version": "0"},
	})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *mcpClient) send(msg any) {
	data, err := json.Marshal(msg)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(data, '\n'))
	require.NoError(c.t, err, "server stderr:\n%s", c.stderr.String())
}

// call sends a request and returns its result, failing on a JSON-RPC error.
func (c *mcpClient) call(method string, params any) json.RawMessage {
	c.nextID++
	id := c.nextID
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for c.out.Scan() {
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(c.out.Bytes(), &resp) != nil || resp.ID == nil || *resp.ID != id {
			continue // a notification or log line
		}
		if resp.Error != nil {
			c.t.Fatalf("%s: %s", method, resp.Error.Message)
		}
		return resp.Result
	}
	c.t.Fatalf("%s: server closed stdout (%v); stderr:\n%s", method, c.out.Err(), c.stderr.String())
	return nil
}

// tool calls a tool and returns the text of its result; a tool error fails.
func (c *mcpClient) tool(name string, args any) string {
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(c.t, json.Unmarshal(c.call("tools/call", map[string]any{"name": name, "arguments": args}), &res))
	var text string
	if len(res.Content) > 0 {
		text = res.Content[0].Text
	}
	if res.IsError {
		c.t.Fatalf("%s failed: %s\nserver stderr:\n%s", name, text, c.stderr.String())
	}
	return text
}

func (c *mcpClient) readGraph() *Graph {
	var g struct {
		Entities  []Entity   `json:"entities"`
		Relations []Relation `json:"relations"`
	}
	text := c.tool("read_graph", map[string]any{})
	require.NoError(c.t, json.Unmarshal([]byte(text), &g), "read_graph returned %q", text)
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
	srv := startServer(t, file)
	settle = 100 * time.Millisecond
	defer func() { settle = time.Millisecond }()

	const rounds = 40
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the agent, through the server
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			name := fmt.Sprintf("srv-%d", i)
			srv.tool("create_entities", map[string]any{"entities": []Entity{{Name: name, EntityType: "thing", Observations: []string{"created"}}}})
			srv.tool("add_observations", map[string]any{"observations": []map[string]any{{"entityName": name, "contents": []string{fmt.Sprintf("seen %d", i)}}}})
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

	g := srv.readGraph()
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
	srv.tool("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "srv-0", "contents": []string{"last"}}}})
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
