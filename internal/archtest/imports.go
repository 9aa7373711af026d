package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// ModulePath is the module whose packages the import rules cover.
const ModulePath = "github.com/leasekit/leasekit"

// Package is one package of the module as `go list -json` reports it:
// its import path relative to the module, and its imports outside the
// standard library (module ones relative too) by its own code and by its
// tests (TestImports and XTestImports, without what its own code already
// imports, and without itself).
type Package struct {
	Path        string
	Imports     []string
	TestImports []string
}

// Layer is one row of ARCHITECTURE.md's layer table: the packages in it,
// what their code may import besides the standard library (layer names,
// or external module paths, a path also allowing its subpackages) and what
// their tests may import beyond that.
type Layer struct {
	Name        string
	Packages    []string
	Imports     []string
	TestImports []string
}

// Markers around the two tables of docs/ARCHITECTURE.md the tests read.
const (
	layersBegin = "<!-- archtest:layers:begin -->"
	layersEnd   = "<!-- archtest:layers:end -->"
	graphBegin  = "<!-- archtest:graph:begin -->"
	graphEnd    = "<!-- archtest:graph:end -->"
)

// section returns the text between begin and end in doc.
func section(doc, begin, end string) (string, error) {
	_, body, _, err := cutSection(doc, begin, end)
	return strings.TrimSpace(body), err
}

// cutSection splits doc around the text between the markers begin and end
// (the markers stay in before and after).
func cutSection(doc, begin, end string) (before, body, after string, err error) {
	before, rest, ok := strings.Cut(doc, begin)
	if !ok {
		return "", "", "", fmt.Errorf("archtest: no %s in the document", begin)
	}
	body, after, ok = strings.Cut(rest, end)
	if !ok {
		return "", "", "", fmt.Errorf("archtest: no %s after %s", end, begin)
	}
	return before + begin, body, end + after, nil
}

// tableRows returns the cells of a markdown table's body rows (the header
// and its separator dropped).
func tableRows(table string) ([][]string, error) {
	lines := strings.Split(table, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "|---") {
		return nil, fmt.Errorf("archtest: %q is not a markdown table", firstLine(table))
	}
	var rows [][]string
	for _, line := range lines[2:] {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
			return nil, fmt.Errorf("archtest: table line %q is not a row", line)
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// codeSpans returns the `quoted` words of a table cell, in order.
func codeSpans(cell string) []string {
	var spans []string
	for {
		_, rest, ok := strings.Cut(cell, "`")
		if !ok {
			return spans
		}
		span, after, ok := strings.Cut(rest, "`")
		if !ok {
			return spans
		}
		spans = append(spans, span)
		cell = after
	}
}

// ParseLayers reads the layer table of an ARCHITECTURE.md document.
func ParseLayers(doc string) ([]Layer, error) {
	table, err := section(doc, layersBegin, layersEnd)
	if err != nil {
		return nil, err
	}
	rows, err := tableRows(table)
	if err != nil {
		return nil, err
	}
	var layers []Layer
	for _, cells := range rows {
		if len(cells) != 4 {
			return nil, fmt.Errorf("archtest: layer row %v has %d cells, want 4", cells, len(cells))
		}
		names := codeSpans(cells[0])
		if len(names) != 1 {
			return nil, fmt.Errorf("archtest: layer row %v names no single layer", cells)
		}
		layers = append(layers, Layer{Name: names[0], Packages: codeSpans(cells[1]), Imports: codeSpans(cells[2]),
			TestImports: codeSpans(cells[3])})
	}
	return layers, nil
}

// CheckLayers returns every rule packages break: a package in no layer (or
// in two), a layer naming a package that does not exist, and each import
// edge the importer's layer does not allow.
func CheckLayers(layers []Layer, packages []Package) []string {
	var findings []string
	layerOf := map[string]*Layer{}
	byName := map[string]*Layer{}
	for i := range layers {
		layer := &layers[i]
		byName[layer.Name] = layer
		for _, pkg := range layer.Packages {
			if other := layerOf[pkg]; other != nil {
				findings = append(findings, fmt.Sprintf("%s is in layers %s and %s", pkg, other.Name, layer.Name))
			}
			layerOf[pkg] = layer
		}
	}
	exists := map[string]bool{}
	for _, pkg := range packages {
		exists[pkg.Path] = true
		layer := layerOf[pkg.Path]
		if layer == nil {
			findings = append(findings, fmt.Sprintf("%s is in no layer of ARCHITECTURE.md: add it to one", pkg.Path))
			continue
		}
		for _, imported := range pkg.Imports {
			if !allows(byName, layerOf, layer.Imports, imported) {
				findings = append(findings, fmt.Sprintf("%s (layer %s) imports %s, which the layer does not allow",
					pkg.Path, layer.Name, imported))
			}
		}
		for _, imported := range pkg.TestImports {
			if !allows(byName, layerOf, layer.Imports, imported) && !allows(byName, layerOf, layer.TestImports, imported) {
				findings = append(findings, fmt.Sprintf("%s (layer %s) tests import %s, which the layer does not allow",
					pkg.Path, layer.Name, imported))
			}
		}
	}
	for _, layer := range layers {
		for _, pkg := range layer.Packages {
			if !exists[pkg] {
				findings = append(findings, fmt.Sprintf("layer %s lists %s, which is not a package", layer.Name, pkg))
			}
		}
		for _, allowed := range append(slices.Clone(layer.Imports), layer.TestImports...) {
			if byName[allowed] == nil && !strings.Contains(firstElement(allowed), ".") {
				findings = append(findings, fmt.Sprintf("layer %s allows %s, which is neither a layer nor an external module", layer.Name, allowed))
			}
		}
	}
	slices.Sort(findings)
	return findings
}

// allows reports whether the allowed list (layer names and external paths)
// covers imported.
func allows(byName map[string]*Layer, layerOf map[string]*Layer, allowed []string, imported string) bool {
	for _, entry := range allowed {
		if byName[entry] != nil {
			if layer := layerOf[imported]; layer != nil && layer.Name == entry {
				return true
			}
			continue
		}
		if imported == entry || strings.HasPrefix(imported, entry+"/") {
			return true
		}
	}
	return false
}

func firstElement(path string) string {
	first, _, _ := strings.Cut(path, "/")
	return first
}

// FormatGraph renders the package graph as ARCHITECTURE.md's graph table:
// one row per package, sorted, with its imports and its tests' imports.
func FormatGraph(packages []Package) string {
	sorted := slices.Clone(packages)
	slices.SortFunc(sorted, func(a, b Package) int { return strings.Compare(a.Path, b.Path) })
	var b strings.Builder
	b.WriteString("| package | imports (module) | imports (external) | tests also import |\n|---|---|---|---|\n")
	for _, pkg := range sorted {
		module, external := splitExternal(pkg.Imports)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", pkg.Path, spans(module), spans(external), spans(pkg.TestImports))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// GraphSection returns the graph table of an ARCHITECTURE.md document.
func GraphSection(doc string) (string, error) { return section(doc, graphBegin, graphEnd) }

// ReplaceGraph returns doc with its graph table replaced by graph.
func ReplaceGraph(doc, graph string) (string, error) {
	before, _, after, err := cutSection(doc, graphBegin, graphEnd)
	if err != nil {
		return "", err
	}
	return before + "\n" + graph + "\n" + after, nil
}

// splitExternal separates module-relative paths from external ones (whose
// first element has a dot).
func splitExternal(paths []string) (module, external []string) {
	for _, path := range paths {
		if strings.Contains(firstElement(path), ".") {
			external = append(external, path)
		} else {
			module = append(module, path)
		}
	}
	return module, external
}

func spans(paths []string) string {
	if len(paths) == 0 {
		return "-"
	}
	quoted := make([]string, len(paths))
	for i, path := range paths {
		quoted[i] = "`" + path + "`"
	}
	return strings.Join(quoted, " ")
}

// ForbiddenDeps returns the entries of deps (a binary's `go list -deps`,
// full import paths) that are module packages in one of the forbidden
// layers: what a shipped binary must not link.
func ForbiddenDeps(layers []Layer, forbidden []string, deps []string) []string {
	var found []string
	for _, layer := range layers {
		if !slices.Contains(forbidden, layer.Name) {
			continue
		}
		for _, pkg := range layer.Packages {
			if slices.Contains(deps, ModulePath+"/"+pkg) {
				found = append(found, pkg+" (layer "+layer.Name+")")
			}
		}
	}
	slices.Sort(found)
	return found
}
