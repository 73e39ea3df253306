package main

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"
)

// TestEveryGitProcessThroughCommand refuses a git process started by a
// package strata links without gitstore.Command (the store's gitCmd goes
// through it): each function that makes an exec.Command of "git" must hand
// it to Command, which turns replace refs and core.fsmonitor off (attack37
// M1: a replace ref made git's rev-list skip a commit git push then sent;
// L4: a repository's fsmonitor program run by strata).
func TestEveryGitProcessThroughCommand(t *testing.T) {
	seen := 0
	eachLinkedFile(t, []string{".", "../strata-serve"}, func(fset *token.FileSet, file *ast.File) {
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var gits []token.Pos
			door := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					door = door || fun.Name == "Command"
				case *ast.SelectorExpr:
					x, _ := fun.X.(*ast.Ident)
					switch {
					case fun.Sel.Name == "gitCmd", x != nil && x.Name == "gitstore" && fun.Sel.Name == "Command":
						door = true
					case x != nil && x.Name == "exec" && strings.HasPrefix(fun.Sel.Name, "Command"):
						for _, a := range call.Args {
							// the literal, or the git binary LookPath found (gc.go's bin)
							lit, isLit := a.(*ast.BasicLit)
							id, isID := a.(*ast.Ident)
							if isLit && lit.Value == `"git"` || isID && id.Name == "bin" {
								gits = append(gits, call.Pos())
								break
							}
						}
					}
				}
				return true
			})
			seen += len(gits)
			if !door {
				for _, p := range gits {
					t.Errorf("%s: git started without gitstore.Command (replace refs and core.fsmonitor stay on)", fset.Position(p))
				}
			}
		}
	})
	if seen == 0 {
		t.Fatal("no git process found: the check looks at nothing")
	}
}
