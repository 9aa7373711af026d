package statecas

import (
	"go/ast"
	"go/parser"
	"go/token"

	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// engineDirs are the engine packages this test polices: the determinism
// rules of ARCHITECTURE.md (no OS access, wall-clock reads, sleeps, global
// randomness, goroutines or select; no dependence on map order).
var engineDirs = []string{".", "statecastest", "../../admission", "../../dirlease"}

var bannedImports = map[string]bool{
	"os": true, "os/exec": true, "syscall": true, "math/rand": true, "math/rand/v2": true, "unsafe": true,
}

var bannedCalls = map[string]bool{
	"time.Now": true, "time.Sleep": true, "time.Since": true, "time.Until": true,
	"time.After": true, "time.Tick": true, "time.NewTimer": true, "time.NewTicker": true,
}

func TestEngineDeterminismRules(t *testing.T) {
	var problems []string
	filesChecked := 0
	for _, dir := range engineDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			filesChecked++
			problems = append(problems, checkFile(t, file)...)
		}
	}
	if filesChecked < 10 {
		t.Fatalf("only %d engine files found: the directory list is stale", filesChecked)
	}
	sort.Strings(problems)
	for _, problem := range problems {
		t.Error(problem)
	}
}

func checkFile(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	parsed, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	report := func(node ast.Node, what string) {
		problems = append(problems, fset.Position(node.Pos()).String()+": "+what)
	}
	for _, spec := range parsed.Imports {
		importPath, _ := strconv.Unquote(spec.Path.Value)
		if bannedImports[importPath] || strings.HasPrefix(importPath, "golang.org/x/sys") {
			report(spec, "imports "+importPath)
		}
	}
	maps := mapVariables(parsed)
	ast.Inspect(parsed, func(node ast.Node) bool {
		switch n := node.(type) {
		case *ast.GoStmt:
			report(n, "starts a goroutine")
		case *ast.SelectStmt:
			report(n, "uses select")
		case *ast.SelectorExpr:
			if pkg, ok := n.X.(*ast.Ident); ok && bannedCalls[pkg.Name+"."+n.Sel.Name] {
				report(n, "uses "+pkg.Name+"."+n.Sel.Name)
			}
		case *ast.RangeStmt:
			if ident, ok := n.X.(*ast.Ident); ok && maps[ident.Name] {
				report(n, "ranges over map "+ident.Name+" (iteration order is random)")
			}
			if _, ok := n.X.(*ast.CompositeLit); ok {
				if _, isMap := n.X.(*ast.CompositeLit).Type.(*ast.MapType); isMap {
					report(n, "ranges over a map literal")
				}
			}
		}
		return true
	})
	return problems
}

// mapVariables names the identifiers a file declares with a map type or
// assigns from make(map...) or a map literal: a syntactic approximation
// that catches the usual ways of ranging over a map.
func mapVariables(file *ast.File) map[string]bool {
	names := make(map[string]bool)
	isMap := func(expr ast.Expr) bool {
		switch e := expr.(type) {
		case *ast.MapType:
			return true
		case *ast.CompositeLit:
			_, ok := e.Type.(*ast.MapType)
			return ok
		case *ast.CallExpr:
			if fn, ok := e.Fun.(*ast.Ident); ok && fn.Name == "make" && len(e.Args) > 0 {
				_, ok := e.Args[0].(*ast.MapType)
				return ok
			}
		}
		return false
	}
	ast.Inspect(file, func(node ast.Node) bool {
		switch n := node.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if (n.Type != nil && isMap(n.Type)) || (i < len(n.Values) && isMap(n.Values[i])) {
					names[name.Name] = true
				}
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if ident, ok := lhs.(*ast.Ident); ok && i < len(n.Rhs) && isMap(n.Rhs[i]) {
					names[ident.Name] = true
				}
			}
		case *ast.Field:
			if isMap(n.Type) {
				for _, name := range n.Names {
					names[name.Name] = true
				}
			}
		}
		return true
	})
	return names
}
