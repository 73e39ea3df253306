package main

import "github.com/urfave/cli/v2"

func newMCPCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the history to an agent: a read-only MCP server over stdio",
		Description: `Speaks the Model Context Protocol (JSON-RPC, one message per line) on
stdin and stdout; its own logs go to stderr. Tools, each read-only:
strata_log, strata_show, strata_diff, strata_blame, strata_at,
strata_resume (nothing is expired), strata_decisions, strata_validate
(nothing is recorded). A tool that fails (a path outside the kept files, a
time that does not parse) answers with an MCP tool error and the server
goes on; so does a line that is not a JSON-RPC message it can take, which
gets a JSON-RPC error (Parse error, Invalid Request). Register it for Claude Code with: strata claude install --mcp
The server is the program strata-serve, installed with strata.`,
		Action: func(c *cli.Context) error {
			eng, err := open(e) // fail at once outside a repository
			if err != nil {
				return err
			}
			return serveWith(e, "mcp", "-dir", eng.Root(), "-version", version())
		},
	}
}
