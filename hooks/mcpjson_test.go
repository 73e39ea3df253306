package hooks

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInstallMCP(t *testing.T) {
	out, changed, err := InstallMCP(MCPPath, nil)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "{\n  \"mcpServers\": {\n    \"strata\": {\n      \"type\": \"stdio\",\n      \"command\": \"strata\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"env\": {}\n    }\n  }\n}\n", string(out))
	again, changed, err := InstallMCP(MCPPath, out)
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, out, again)

	other := []byte(`{"z": 1.50, "mcpServers": {"mem": {"command": "npx", "args": ["-y", "x"]}}, "a": "<b>"}`)
	out, changed, err = InstallMCP(MCPPath, other)
	require.NoError(t, err)
	require.True(t, changed)
	require.Contains(t, string(out), `"z": 1.50`)
	require.Contains(t, string(out), `"a": "<b>"`)
	require.Regexp(t, `(?s)"mem": \{.*"strata": \{`, string(out))

	_, _, err = InstallMCP(MCPPath, []byte(`{"mcpServers": {"strata": {"command": "other"}}}`))
	require.ErrorContains(t, err, "/mcpServers/strata")
	_, _, err = InstallMCP(MCPPath, []byte(`[1]`))
	require.Error(t, err)
}
