package hooks

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInstallMCP(t *testing.T) {
	out, rec, err := InstallMCP(MCPPath, nil)
	require.NoError(t, err)
	require.NotNil(t, rec)
	require.Equal(t, "{\n  \"mcpServers\": {\n    \"strata\": {\n      \"type\": \"stdio\",\n      \"command\": \"strata\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"env\": {}\n    }\n  }\n}\n", string(out))
	again, rec, err := InstallMCP(MCPPath, out)
	require.NoError(t, err)
	require.Nil(t, rec)
	require.Equal(t, out, again)

	other := []byte(`{"z": 1.50, "mcpServers": {"mem": {"command": "npx", "args": ["-y", "x"]}}, "a": "<b>"}`)
	out, rec, err = InstallMCP(MCPPath, other)
	require.NoError(t, err)
	require.NotNil(t, rec)
	require.Contains(t, string(out), `"z": 1.50`)
	require.Contains(t, string(out), `"a": "<b>"`)
	require.Regexp(t, `(?s)"mem": \{.*"strata": \{`, string(out))

	_, _, err = InstallMCP(MCPPath, []byte(`{"mcpServers": {"strata": {"command": "other"}}}`))
	require.ErrorContains(t, err, "/mcpServers/strata")
	_, _, err = InstallMCP(MCPPath, []byte(`[1]`))
	require.Error(t, err)
}

// install and uninstall keep the user's own servers as they wrote them
// (an args array on one line stays on it) and give the file back byte for
// byte; the mcpServers object strata's entry alone filled goes with it.
func TestMCPKeepsLayout(t *testing.T) {
	in := "{\r\n    \"mcpServers\": {\r\n        \"memory\": {\r\n            \"command\": \"npx\",\r\n            \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]\r\n        }\r\n    }\r\n}\r\n"
	out, rec, err := InstallMCP(MCPPath, []byte(in))
	require.NoError(t, err)
	require.NotNil(t, rec)
	require.Contains(t, string(out), "\"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]\r\n        },\r\n        \"strata\": {\r\n            \"type\": \"stdio\",\r\n")
	require.Equal(t, bytes.Count(out, []byte("\n")), bytes.Count(out, []byte("\r\n")), "every line end CRLF")
	back, changed, _, err := UninstallMCP(MCPPath, out, rec)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, in, string(back))

	alone := []byte("{\n  \"x\": 1\n}\n")
	out, rec, err = InstallMCP(MCPPath, alone)
	require.NoError(t, err)
	back, _, _, err = UninstallMCP(MCPPath, out, rec)
	require.NoError(t, err)
	require.Equal(t, string(alone), string(back))
}

// the user's own empty mcpServers stays after install and uninstall; the
// one install created goes, and without the record of the install it
// stays (attack23 F6).
func TestMCPEmptyServersKept(t *testing.T) {
	in := "{\n  \"mcpServers\": {}\n}\n"
	out, rec, err := InstallMCP(MCPPath, []byte(in))
	require.NoError(t, err)
	back, changed, _, err := UninstallMCP(MCPPath, out, rec)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, in, string(back))

	out, rec, err = InstallMCP(MCPPath, []byte(`{"x": 1}`))
	require.NoError(t, err)
	require.Equal(t, []string{"/mcpServers"}, rec.Created)
	back, _, _, err = UninstallMCP(MCPPath, out, rec)
	require.NoError(t, err)
	require.Equal(t, `{"x": 1}`, string(back))
	// with no record of this clone's install, the server stays
	back, changed, left, err := UninstallMCP(MCPPath, out, nil)
	require.NoError(t, err)
	require.False(t, changed)
	require.True(t, left)
	require.Equal(t, string(out), string(back))
}

// a strata server this clone's install did not add (a teammate's,
// committed; written by hand) stays, and uninstall says so (attack33 L2:
// it removed it); with the record of an install that added it, it goes.
func TestMCPUninstallLeavesWhatInstallDidNotAdd(t *testing.T) {
	committed := []byte(`{"mcpServers": {"strata": {"type": "stdio", "command": "strata", "args": ["mcp"], "env": {}}}}`)
	out, rec, err := InstallMCP(MCPPath, committed)
	require.NoError(t, err)
	require.Nil(t, rec, "already there: install adds nothing and records nothing")
	back, changed, left, err := UninstallMCP(MCPPath, out, rec)
	require.NoError(t, err)
	require.False(t, changed)
	require.True(t, left)
	require.Equal(t, string(committed), string(back))
}
