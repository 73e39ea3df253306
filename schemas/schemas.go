// Package schemas holds strata's built-in JSON Schema (draft 2020-12) files,
// embedded in the binary, and exports them for editors. Each schema allows
// unknown extra fields, because agents add fields as workflows evolve; the
// rules a schema cannot express are checked by package validate.
package schemas

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-dev/strata/atomicfile"
)

//go:embed *.schema.json
var files embed.FS

// BaseID is the URL prefix of every built-in schema's $id.
const BaseID = "https://strata.dev/schemas/"

const suffix = ".schema.json"

// names is computed once from the embedded files, sorted.
var names = func() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	var ns []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), suffix); ok {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}()

// Names returns the names of the built-in schemas, sorted, e.g.
// "workflow-state". The caller may modify the returned slice.
func Names() []string {
	return slices.Clone(names)
}

// Get returns the bytes of the named built-in schema, and false when there is
// no such schema. The caller must not modify the returned bytes.
func Get(name string) ([]byte, bool) {
	if !slices.Contains(names, name) {
		return nil, false
	}
	b, err := files.ReadFile(name + suffix)
	if err != nil {
		return nil, false
	}
	return b, true
}

// ID returns the $id of the named built-in schema, or "" when there is no
// such schema.
func ID(name string) string {
	if !slices.Contains(names, name) {
		return ""
	}
	return BaseID + name + suffix
}

// Export writes every built-in schema to dir as <name>.schema.json, creating
// dir if needed and replacing existing files (or links) of those names,
// each atomically. It is idempotent.
func Export(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export schemas: %w", err)
	}
	for _, n := range names {
		b, _ := Get(n)
		// atomically: a symbolic link of that name (a clone may commit
		// one) is replaced, never written through
		if err := atomicfile.Write(filepath.Join(dir, n+suffix), b, atomicfile.Default); err != nil {
			return fmt.Errorf("export schemas: %w", err)
		}
	}
	return nil
}
