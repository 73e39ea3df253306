package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary be the server of a subprocess test: with
// STRATA_MCP_CHILD set to a repository it serves MCP on its stdin/stdout.
func TestMain(m *testing.M) {
	if dir := os.Getenv("STRATA_MCP_CHILD"); dir != "" {
		now := func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
		if err := Serve(context.Background(), os.Stdin, os.Stdout, Options{Dir: dir, Now: now, Version: "test"}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The SDK's own client over a real subprocess's stdio: a bad call is a
// tool error and the next call is answered.
func TestSubprocessStdio(t *testing.T) {
	dir := repo(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "STRATA_MCP_CHILD="+dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "strata_blame", Arguments: map[string]any{"path": "/etc/passwd"}})
	require.NoError(t, err)
	require.True(t, res.IsError)

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "strata_blame", Arguments: map[string]any{"path": ".claude/workflow-state.json", "pointer": "/phase"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, `/phase: "plan"`)
}
