package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
)

func newSchemaCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "list, show or export the built-in JSON Schemas; infer one from your files",
		Subcommands: []*cli.Command{
			newSchemaInferCommand(e),
			{
				Name:  "list",
				Usage: "list the built-in schemas with their $id",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON array of {name, id}"}},
				Action: func(c *cli.Context) error {
					if c.Bool("json") {
						list := []map[string]string{}
						for _, n := range engine.SchemaNames() {
							list = append(list, map[string]string{"name": n, "id": engine.SchemaID(n)})
						}
						return writeJSON(e.Out, list)
					}
					for _, n := range engine.SchemaNames() {
						fmt.Fprintf(e.Out, "%-20s %s\n", n, engine.SchemaID(n))
					}
					return nil
				},
			},
			{
				Name:      "show",
				Usage:     "print one schema",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("schema show takes exactly one NAME (see strata schema list)")
					}
					data, ok := engine.Schema(c.Args().First())
					if !ok {
						return usagef("no schema named %q (see strata schema list)", c.Args().First())
					}
					_, err := e.Out.Write(data)
					return err
				},
			},
			{
				Name:      "export",
				Usage:     "write every schema to DIR as NAME.schema.json, for an editor's json.schemas",
				ArgsUsage: "DIR",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("schema export takes exactly one DIR")
					}
					dir := c.Args().First()
					if !filepath.IsAbs(dir) {
						dir = filepath.Join(e.Dir, dir)
					}
					if err := os.MkdirAll(dir, 0o755); err != nil {
						return fmt.Errorf("export: %w", err)
					}
					if err := engine.ExportSchemas(dir); err != nil {
						return fmt.Errorf("export: %w", err)
					}
					fmt.Fprintf(e.Out, "wrote %d schemas to %s\n", len(engine.SchemaNames()), c.Args().First())
					return nil
				},
			},
		},
	}
}
