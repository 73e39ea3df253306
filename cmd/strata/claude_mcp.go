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

// planMCP reads the project's .mcp.json and returns the write that
// registers strata's MCP server in it (nil: nothing to write), so that a
// .mcp.json that cannot take it fails the install before anything is
// written. A .mcp.json that is not a regular file, or not a JSON object,
// is left untouched.
func planMCP(e *env, eng *engine.Engine, dryRun bool) (write func() error, err error) {
	name := filepath.Join(eng.Root(), hooks.MCPPath)
	var data []byte
	st, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, &engine.PathError{Path: hooks.MCPPath, Reason: "not a regular file (a symbolic link is never written through)"}
	default:
		if data, err = os.ReadFile(name); err != nil {
			return nil, err
		}
	}
	out, changed, err := hooks.InstallMCP(hooks.MCPPath, data)
	if err != nil {
		return nil, err
	}
	switch {
	case dryRun:
		return func() error {
			fmt.Fprintf(e.Err, "%s: would register MCP server %q (dry run)\n", hooks.MCPPath, hooks.MCPServer)
			return nil
		}, nil
	case !changed:
		return func() error {
			fmt.Fprintf(e.Out, "%s already registers strata's MCP server\n", hooks.MCPPath)
			return nil
		}, nil
	}
	mode := fs.FileMode(0o644)
	if st != nil {
		mode = st.Mode().Perm()
	}
	return func() error {
		if err := engine.WriteUserFile(name, out, mode); err != nil {
			return err
		}
		fmt.Fprintf(e.Out, "updated %s: MCP server %q runs \"strata mcp\"\n", hooks.MCPPath, hooks.MCPServer)
		return nil
	}, nil
}
