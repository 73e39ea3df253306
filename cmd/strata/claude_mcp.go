package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/hooks"
	"github.com/strata-dev/strata/state"
)

// planMCP reads the project's .mcp.json and returns the write that
// registers strata's MCP server in it, or with remove takes it out (the
// write reports when there is nothing to change), so that a
// .mcp.json that cannot take it fails the install before anything is
// written. A .mcp.json that is not a regular file, or not a JSON object,
// is left untouched.
func planMCP(e *env, eng *engine.Engine, notes *claudeNotes, dryRun, remove bool) (write func() error, err error) {
	name := filepath.Join(eng.Root(), hooks.MCPPath)
	var data []byte
	st, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		// what is on disk, not the content: exit 3 (contract §11)
		return nil, &engine.PathError{Path: hooks.MCPPath, Reason: "not a regular file (a symbolic link is never written through)", IO: true}
	case st.Size() > eng.Config().MaxSize:
		return nil, state.Problems{{Path: hooks.MCPPath, Message: fmt.Sprintf("file is %d bytes, larger than max_size %d; not read", st.Size(), eng.Config().MaxSize)}}
	default:
		if data, err = os.ReadFile(name); err != nil {
			return nil, err
		}
	}
	would, done, already := "would register", "updated %s: MCP server %q runs \"strata mcp\"\n", "%s already registers strata's MCP server\n"
	if remove {
		would, done, already = "would remove", "updated %s: MCP server %q removed\n", "%s has no MCP server of strata's\n"
	}
	rec, err := notes.read(hooks.MCPPath)
	if err != nil {
		return nil, err
	}
	var out []byte
	changed, left := false, false
	if remove {
		out, changed, left, err = hooks.UninstallMCP(hooks.MCPPath, data, rec)
		rec = nil // forgotten once uninstalled
	} else {
		out, rec, err = hooks.InstallMCP(hooks.MCPPath, data)
		changed = rec != nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case left:
		return func() error {
			w := e.Out
			if dryRun {
				w = e.Err
			}
			fmt.Fprintf(w, "%s: left MCP server %q: claude install here has no record of adding it (committed, written by hand, or installed by an older strata); delete it by hand to remove it\n", hooks.MCPPath, hooks.MCPServer)
			if dryRun {
				return nil
			}
			return notes.save(hooks.MCPPath, nil)
		}, nil
	case dryRun:
		return func() error {
			fmt.Fprintf(e.Err, "%s: %s MCP server %q (dry run)\n", hooks.MCPPath, would, hooks.MCPServer)
			return nil
		}, nil
	case !changed:
		return func() error {
			fmt.Fprintf(e.Out, already, hooks.MCPPath)
			if remove {
				return notes.save(hooks.MCPPath, nil)
			}
			return nil
		}, nil
	}
	mode := engine.UserMode // a new .mcp.json: 0666 less the umask
	if st != nil {
		mode = st.Mode().Perm()
	}
	return func() error {
		if err := notes.check(); err != nil {
			return err
		}
		if err := engine.WriteUserFile(name, out, mode); err != nil {
			return err
		}
		fmt.Fprintf(e.Out, done, hooks.MCPPath, hooks.MCPServer)
		// what install added, so that uninstall takes out that and no more
		return notes.save(hooks.MCPPath, rec)
	}, nil
}
