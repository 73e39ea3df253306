package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every strata start, `version` and each hook call included, pays the
// package initialisation of all it links (issue 11: start-up near git's).
// A pattern compiled in a package-level variable is such a cost (doctor's
// fsck line pattern was 0.17 ms of 2.7): patterns are compiled when first
// asked (sync.OnceValue). This reads the source of every package the
// strata command links and refuses a package-level regexp compile.
func TestNoPatternCompiledAtInit(t *testing.T) {
	eachLinkedFile(t, []string{"."}, func(fset *token.FileSet, file *ast.File) {
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			ast.Inspect(g, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // compiled when called
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "regexp" && strings.Contains(sel.Sel.Name, "Compile") {
							t.Errorf("%s: regexp.%s at package init; compile it when first asked (sync.OnceValue)", fset.Position(n.Pos()), sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
	})
}

// eachLinkedFile calls fn with each non-test Go file of strata's own
// packages that the commands in dirs (relative to this package) link,
// parsed; it skips the test when go list cannot answer.
func eachLinkedFile(t *testing.T, dirs []string, fn func(*token.FileSet, *ast.File)) {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{end}}"}, dirs...)...).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(path, "github.com/strata-dev/strata") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			fn(fset, file)
		}
	}
}
