// Package mcptest runs the reference MCP memory server
// (@modelcontextprotocol/server-memory, installed from npm once per test
// run) and talks to it over stdio JSON-RPC, for tests that check strata and
// the server share a graph file without losing each other's writes. Tests
// skip with a message where node, npm or the registry is out of reach.
package mcptest

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

	"github.com/stretchr/testify/require"
)

// The reference server is installed from npm once per test run.
var (
	serverOnce sync.Once
	serverDir  string
	serverSkip string // why the server cannot be used here
)

// Cleanup removes the installed server; call it from TestMain after m.Run.
func Cleanup() {
	if serverDir != "" {
		os.RemoveAll(serverDir)
	}
}

// networkFailure matches npm's messages for a registry it cannot reach.
var networkFailure = regexp.MustCompile(`ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|network|proxy|socket hang up|timed out`)

// ServerPath returns the path of the installed server's dist/index.js,
// skipping the test when node or npm is missing or the registry cannot be
// reached.
func ServerPath(t *testing.T) string {
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

// Client speaks JSON-RPC 2.0 over the server's stdio, one message a line.
type Client struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	nextID int
	stderr bytes.Buffer
}

// Start runs the server on the graph file (MEMORY_FILE_PATH) and completes
// the MCP handshake; the server is stopped when the test ends.
func Start(t *testing.T, file string) *Client {
	index := ServerPath(t)
	c := &Client{t: t}
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

func (c *Client) send(msg any) {
	data, err := json.Marshal(msg)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(data, '\n'))
	require.NoError(c.t, err, "server stderr:\n%s", c.stderr.String())
}

// call sends a request and returns its result, failing on a JSON-RPC error.
func (c *Client) call(method string, params any) json.RawMessage {
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

// Tool calls a tool and returns the text of its result; a tool error fails.
func (c *Client) Tool(name string, args any) string {
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
