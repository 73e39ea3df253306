package hooks

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/strata-dev/strata/state"
)

// The project's MCP servers file, as `claude mcp add --scope project` writes
// it, and strata's entry in it.
const (
	MCPPath   = ".mcp.json"
	MCPServer = "strata"
)

// mcpEntry is strata's server entry, in the shape Claude Code writes:
// {"type": "stdio", "command": ..., "args": [...], "env": {}}.
const mcpEntry = `{"type":"stdio","command":"strata","args":["mcp"],"env":{}}`

// InstallMCP adds the server "strata" (running `strata mcp`) under
// mcpServers in the content of a .mcp.json (nil or empty for a missing
// file), keeping every other key in its order and the exact text of every
// value; changed is false when it is already there. A "strata" entry that
// runs something else is not replaced: it is reported as state.Problems
// naming its JSON Pointer, as is content that is not a JSON object.
func InstallMCP(path string, data []byte) (out []byte, changed bool, err error) {
	root := object{}
	if len(bytes.TrimSpace(data)) > 0 {
		if root, err = decodeObject(data); err != nil {
			return nil, false, state.Problems{{Path: path, Message: err.Error()}}
		}
	}
	servers := object{}
	if raw, ok := root.get("mcpServers"); ok {
		if servers, err = decodeObject(raw); err != nil {
			return nil, false, state.Problems{{Path: path, Pointer: "/mcpServers", Message: err.Error()}}
		}
	}
	if raw, ok := servers.get(MCPServer); ok {
		var e struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Command == "strata" && slices.Equal(e.Args, []string{"mcp"}) {
			return data, false, nil
		}
		return nil, false, state.Problems{{Path: path, Pointer: "/mcpServers/" + MCPServer,
			Message: "a server named strata already runs something else; remove or rename it first"}}
	}
	servers.set(MCPServer, json.RawMessage(mcpEntry))
	root.set("mcpServers", servers.encode())
	return indent(root.encode())
}
