package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/jsonedit"
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
	if err := once(path, servers); err != nil {
		return nil, false, err
	}
	if raw, ok := servers.get(MCPServer); ok {
		if runsStrataMCP(raw) {
			return data, false, nil
		}
		return nil, false, state.Problems{{Path: path, Pointer: "/mcpServers/" + MCPServer,
			Message: "a server named strata already runs something else; remove or rename it first"}}
	}
	if out = data; len(bytes.TrimSpace(data)) == 0 {
		out = []byte("{}\n")
	}
	if out, err = jsonedit.Set(out, []string{"mcpServers", MCPServer}, json.RawMessage(mcpEntry)); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return out, true, nil
}

// runsStrataMCP reports whether a server entry runs `strata mcp`.
func runsStrataMCP(raw json.RawMessage) bool {
	var e struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Command == "strata" && slices.Equal(e.Args, []string{"mcp"})
}

// UninstallMCP removes the server "strata" from the content of a .mcp.json
// when it runs `strata mcp` (InstallMCP's entry), keeping every other key
// in its order and the exact text of every value; changed is false when
// there is none. A "strata" entry that runs something else is not
// removed: it is reported as state.Problems naming its JSON Pointer, as is
// content that is not a JSON object.
func UninstallMCP(path string, data []byte) (out []byte, changed bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, false, nil
	}
	root, err := decodeObject(data)
	if err != nil {
		return nil, false, state.Problems{{Path: path, Message: err.Error()}}
	}
	raw, ok := root.get("mcpServers")
	if !ok {
		return data, false, nil
	}
	servers, err := decodeObject(raw)
	if err != nil {
		return nil, false, state.Problems{{Path: path, Pointer: "/mcpServers", Message: err.Error()}}
	}
	if err := once(path, servers); err != nil {
		return nil, false, err
	}
	entry, ok := servers.get(MCPServer)
	if !ok {
		return data, false, nil
	}
	if !runsStrataMCP(entry) {
		return nil, false, state.Problems{{Path: path, Pointer: "/mcpServers/" + MCPServer,
			Message: "the server named strata runs something else; not removed"}}
	}
	at := []string{"mcpServers", MCPServer}
	if len(servers) == 1 { // strata's was the only one: mcpServers goes with it, as install made it
		at = at[:1]
	}
	if out, err = jsonedit.Delete(data, at); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return out, true, nil
}

// once refuses a .mcp.json whose mcpServers names strata more than once:
// Claude Code runs the last, and which one the user meant is theirs to say.
func once(path string, servers object) error {
	n := 0
	for _, m := range servers {
		if m.key == MCPServer {
			n++
		}
	}
	if n > 1 {
		return state.Problems{{Path: path, Pointer: "/mcpServers/" + MCPServer,
			Message: fmt.Sprintf("a server named strata appears %d times; keep one, then run this again", n)}}
	}
	return nil
}
