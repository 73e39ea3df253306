package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
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
// value, and returns the record of what it added; a nil record when a
// "strata" server running `strata mcp` is already there. A "strata" entry
// that runs something else is not replaced: it is reported as
// state.Problems naming its JSON Pointer, as is content that is not one
// JSON object (a syntax error or a duplicate key, with its line and
// column).
func InstallMCP(path string, data []byte) (out []byte, in *Added, err error) {
	if err := checkJSON(path, data); err != nil {
		return nil, nil, err
	}
	root := object{}
	if len(bytes.TrimSpace(data)) > 0 {
		if root, err = decodeObject(data); err != nil {
			return nil, nil, positioned(path, data, state.Problems{{Path: path, Message: err.Error()}})
		}
	}
	servers := object{}
	var created []string
	if raw, ok := root.get("mcpServers"); !ok || isNull(raw) {
		created = []string{"/mcpServers"}
	} else if servers, err = decodeObject(raw); err != nil {
		return nil, nil, positioned(path, data, state.Problems{{Path: path, Pointer: "/mcpServers", Message: err.Error()}})
	}
	if raw, ok := servers.get(MCPServer); ok {
		if runsStrataMCP(raw) {
			return data, nil, nil
		}
		return nil, nil, positioned(path, data, state.Problems{{Path: path, Pointer: "/mcpServers/" + MCPServer,
			Message: "a server named strata already runs something else; remove or rename it first"}})
	}
	if out = data; len(bytes.TrimSpace(data)) == 0 {
		out = []byte("{}\n")
	}
	if out, err = jsonedit.Set(out, []string{"mcpServers", MCPServer}, json.RawMessage(mcpEntry)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, added(len(data) > 0, data, out, created), nil
}

// runsStrataMCP reports whether a server entry runs `strata mcp`.
func runsStrataMCP(raw json.RawMessage) bool {
	var e struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Command == "strata" && slices.Equal(e.Args, []string{"mcp"})
}

// UninstallMCP removes the server "strata" from the content of a
// .mcp.json when in (the record of this clone's install) says install
// added it and it is exactly the entry InstallMCP writes, keeping every
// other key in its order and the exact text of every value; the
// mcpServers object goes with it only when in (the record of the install,
// nil when there is none) says install created it, data is still what
// that install wrote, and it is empty again.
// When data is still what that install wrote and the result is the file
// it read, as JSON, the file comes back byte for byte. changed is false
// when there is no "strata" server. A "strata" entry that is not
// InstallMCP's (it runs something else, or has fields of its own) is not
// removed: it is reported as state.Problems naming its JSON Pointer, as
// is content that is not one JSON object. One that is, with no record of
// this clone's install adding it (a teammate's, committed; written by
// hand), stays, and left says so (attack33 L2, as UninstallClaude: before,
// uninstall removed it).
func UninstallMCP(path string, data []byte, in *Added) (out []byte, changed, left bool, err error) {
	out, changed, err = uninstallMCP(path, data, in)
	if err == errNotInstalled {
		return data, false, true, nil
	}
	return out, changed, false, err
}

// errNotInstalled is uninstallMCP's: strata's server is there, and no
// record says this clone's install added it.
var errNotInstalled = errors.New("not added by this clone's install")

func uninstallMCP(path string, data []byte, in *Added) (out []byte, changed bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, false, nil
	}
	if err := checkJSON(path, data); err != nil {
		return nil, false, err
	}
	root, err := decodeObject(data)
	if err != nil {
		return nil, false, positioned(path, data, state.Problems{{Path: path, Message: err.Error()}})
	}
	raw, ok := root.get("mcpServers")
	if !ok || isNull(raw) {
		return data, false, nil
	}
	servers, err := decodeObject(raw)
	if err != nil {
		return nil, false, positioned(path, data, state.Problems{{Path: path, Pointer: "/mcpServers", Message: err.Error()}})
	}
	entry, ok := servers.get(MCPServer)
	if !ok {
		return data, false, nil
	}
	if !sameJSON(entry, []byte(mcpEntry)) {
		msg := "the server named strata runs something else; not removed"
		if runsStrataMCP(entry) {
			msg = "the server named strata is not the entry install writes (" + mcpEntry + "); it is yours, not removed"
		}
		return nil, false, positioned(path, data, state.Problems{{Path: path, Pointer: "/mcpServers/" + MCPServer, Message: msg}})
	}
	if in == nil {
		return nil, false, errNotInstalled
	}
	if out, err = jsonedit.Delete(data, []string{"mcpServers", MCPServer}); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	var created []string
	if in = in.current(data); in != nil {
		created = in.Created
	}
	if out, err = dropCreated(path, out, created); err != nil {
		return nil, false, err
	}
	return in.undo(data, out), true, nil
}
