package archtest

import (
	"go/ast"
	"strconv"
)

// Map order. Go randomises the iteration order of maps on purpose, so an
// engine that ranges over a map does its effects in an order that differs
// from run to run, and the simulator's replay of a seed stops being exact.
// The check is syntactic, an approximation that catches the usual ways:
//
//   - a range over a name the file declares with a map type (a variable, a
//     struct field, a parameter or result), assigns from make(map...) or a
//     map literal, or over such a field through a selector (in.table);
//   - a range over a map literal;
//   - maps.Keys, maps.Values or maps.All anywhere but as the direct argument
//     of slices.Sorted, slices.SortedFunc or slices.SortedStableFunc, the
//     one sanctioned way to walk a map (in sorted order).
//
// A name declared as a map in one scope and as something else in another
// is reported too: rename one of them.

// mapIterators are the functions of package maps that yield in map order.
var mapIterators = map[string]bool{"Keys": true, "Values": true, "All": true}

// sortingCollectors are the functions of package slices that turn an
// iterator into a sorted slice, which makes map order irrelevant.
var sortingCollectors = map[string]bool{"Sorted": true, "SortedFunc": true, "SortedStableFunc": true}

// mapOrderScan is the per-file state of the map-order rules.
type mapOrderScan struct {
	mapsName, slicesName string            // local names of packages maps and slices, "" if not imported
	mapNames             map[string]bool   // identifiers declared or assigned with a map type
	sortedIterators      map[ast.Node]bool // maps.* calls that are the argument of slices.Sorted*
}

// noteMapOrderImport records the local name of packages maps and slices.
func (m *mapOrderScan) noteMapOrderImport(spec *ast.ImportSpec) {
	importPath, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return // checkImports panics on it
	}
	name := importPath
	if spec.Name != nil {
		name = spec.Name.Name
	}
	switch importPath {
	case "maps":
		m.mapsName = name
	case "slices":
		m.slicesName = name
	}
}

// prepareMapOrder collects, before the main walk, the map names of file and
// the maps.* calls already made order-free by a sorting collector.
func (m *mapOrderScan) prepareMapOrder(file *ast.File) {
	m.mapNames = mapNames(file)
	m.sortedIterators = make(map[ast.Node]bool)
	ast.Inspect(file, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if ok && len(call.Args) > 0 && isPackageCall(call, m.slicesName, sortingCollectors) {
			m.sortedIterators[call.Args[0]] = true
		}
		return true
	})
}

// rangeOverMap returns what a range statement iterates in map order, or ""
// when it does not.
func (m *mapOrderScan) rangeOverMap(loop *ast.RangeStmt) string {
	switch x := ast.Unparen(loop.X).(type) {
	case *ast.Ident:
		if m.mapNames[x.Name] {
			return "map " + x.Name
		}
	case *ast.SelectorExpr:
		if m.mapNames[x.Sel.Name] {
			return "map field " + x.Sel.Name
		}
	case *ast.CompositeLit:
		if _, ok := x.Type.(*ast.MapType); ok {
			return "a map literal"
		}
	}
	return ""
}

// unsortedMapIterator returns the name of a maps.* iterator call that is not
// the argument of a sorting collector, or "".
func (m *mapOrderScan) unsortedMapIterator(call *ast.CallExpr) string {
	if !isPackageCall(call, m.mapsName, mapIterators) || m.sortedIterators[call] {
		return ""
	}
	return "maps." + call.Fun.(*ast.SelectorExpr).Sel.Name
}

// isPackageCall reports whether call is pkgName.F(...) with F in names.
func isPackageCall(call *ast.CallExpr, pkgName string, names map[string]bool) bool {
	if pkgName == "" {
		return false
	}
	selector, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := selector.X.(*ast.Ident)
	return ok && pkg.Name == pkgName && names[selector.Sel.Name]
}

// mapNames names the identifiers file declares with a map type (variables,
// struct fields, parameters, results) or assigns from make(map...) or a map
// literal.
func mapNames(file *ast.File) map[string]bool {
	names := make(map[string]bool)
	ast.Inspect(file, func(node ast.Node) bool {
		switch n := node.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if isMapExpr(n.Type) || (i < len(n.Values) && isMapExpr(n.Values[i])) {
					names[name.Name] = true
				}
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if ident, ok := lhs.(*ast.Ident); ok && i < len(n.Rhs) && isMapExpr(n.Rhs[i]) {
					names[ident.Name] = true
				}
			}
		case *ast.Field:
			if isMapExpr(n.Type) {
				for _, name := range n.Names {
					names[name.Name] = true
				}
			}
		}
		return true
	})
	return names
}

// isMapExpr reports whether expr is a map type, a map literal or
// make(map...).
func isMapExpr(expr ast.Expr) bool {
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
