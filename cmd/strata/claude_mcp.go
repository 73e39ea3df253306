package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/hooks"
)

// installMCP registers strata's MCP server in the project's .mcp.json
// (not a kept file: written atomically, not recorded). A .mcp.json that is
// not a regular file, or not a JSON object, is left untouched.
func installMCP(e *env, eng *engine.Engine, dryRun bool) error {
	name := filepath.Join(eng.Root(), hooks.MCPPath)
	var data []byte
	st, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return &engine.PathError{Path: hooks.MCPPath, Reason: "not a regular file (a symbolic link is never written through)"}
	default:
		if data, err = os.ReadFile(name); err != nil {
			return err
		}
	}
	out, changed, err := hooks.InstallMCP(hooks.MCPPath, data)
	if err != nil {
		return err
	}
	switch {
	case dryRun:
		fmt.Fprintf(e.Err, "%s: would register MCP server %q (dry run)\n", hooks.MCPPath, hooks.MCPServer)
		return nil
	case !changed:
		fmt.Fprintf(e.Out, "%s already registers strata's MCP server\n", hooks.MCPPath)
		return nil
	}
	mode := fs.FileMode(0o644)
	if st != nil {
		mode = st.Mode().Perm()
	}
	if err := engine.WriteUserFile(name, out, mode); err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "updated %s: MCP server %q runs \"strata mcp\"\n", hooks.MCPPath, hooks.MCPServer)
	return nil
}
