package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// architectureDoc is the document whose tables the import rules are.
const architectureDoc = "docs/ARCHITECTURE.md"

// shippedBinaries must link no harness: the layers listed in
// harnessLayers, found with `go list -deps`.
var shippedBinaries = []string{"cmd/leasereal"}

// harnessLayers are the layers no shipped binary links.
var harnessLayers = []string{"simulator", "simulated-os", "harness", "workloads", "test-support"}

// listedPackage is what the tests read of `go list -json`.
type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// modulePackages lists every package of the module with its non-standard
// imports, module paths made relative.
func modulePackages(t *testing.T, root string) []Package {
	t.Helper()
	command := exec.Command("go", "list", "-json", "./...")
	command.Dir = root
	output, err := command.Output()
	require.NoError(t, err, "go list failed")
	decoder := json.NewDecoder(strings.NewReader(string(output)))
	var packages []Package
	for decoder.More() {
		var listed listedPackage
		require.NoError(t, decoder.Decode(&listed))
		path := relative(listed.ImportPath)
		imports := nonStandard(listed.Imports)
		var tests []string
		for _, imported := range nonStandard(append(listed.TestImports, listed.XTestImports...)) {
			if imported != path && !slices.Contains(imports, imported) && !slices.Contains(tests, imported) {
				tests = append(tests, imported)
			}
		}
		slices.Sort(tests)
		packages = append(packages, Package{Path: path, Imports: imports, TestImports: tests})
	}
	require.NotEmpty(t, packages)
	return packages
}

func relative(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, ModulePath), "/")
}

// nonStandard keeps the imports outside the standard library (whose first
// element has no dot), module paths made relative, sorted. A main package
// built with a PGO profile imports PGO variants, "path [main package]": the
// variant is the path.
func nonStandard(imports []string) []string {
	var kept []string
	for _, imported := range imports {
		imported, _, _ = strings.Cut(imported, " [")
		if strings.HasPrefix(imported, ModulePath) || strings.Contains(firstElement(imported), ".") {
			kept = append(kept, relative(imported))
		}
	}
	slices.Sort(kept)
	return kept
}

func readArchitecture(t *testing.T, root string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, architectureDoc))
	require.NoError(t, err)
	return string(doc)
}

// TestEveryImportFollowsTheLayers checks every package of `go list ./...`,
// internal ones included, against the layer table of ARCHITECTURE.md: a
// package in no layer, or an import edge its layer does not allow, fails.
func TestEveryImportFollowsTheLayers(t *testing.T) {
	root := repoRoot(t)
	layers, err := ParseLayers(readArchitecture(t, root))
	require.NoError(t, err)
	for _, finding := range CheckLayers(layers, modulePackages(t, root)) {
		t.Errorf("%s (rules: %s, the layer table)", finding, architectureDoc)
	}
}

// TestImportGraphMatchesArchitectureDoc: the graph table of ARCHITECTURE.md
// is exactly the module's import graph, so any new edge (or a removed one)
// shows there in review. LEASEKIT_ARCH_UPDATE=1 rewrites the table.
func TestImportGraphMatchesArchitectureDoc(t *testing.T) {
	root := repoRoot(t)
	doc := readArchitecture(t, root)
	want := FormatGraph(modulePackages(t, root))
	if os.Getenv("LEASEKIT_ARCH_UPDATE") == "1" {
		updated, err := ReplaceGraph(doc, want)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, architectureDoc), []byte(updated), 0o644))
		return
	}
	got, err := GraphSection(doc)
	require.NoError(t, err)
	wantRows, gotRows := strings.Split(want, "\n"), strings.Split(got, "\n")
	for _, row := range wantRows {
		if !slices.Contains(gotRows, row) {
			t.Errorf("the module's graph has a row %s's does not:\n%s", architectureDoc, row)
		}
	}
	for _, row := range gotRows {
		if !slices.Contains(wantRows, row) {
			t.Errorf("%s's graph has a row the module's does not:\n%s", architectureDoc, row)
		}
	}
	if t.Failed() {
		t.Logf("review the changed edges, then: LEASEKIT_ARCH_UPDATE=1 go test ./internal/archtest -run Graph")
	}
}

// TestShippedBinariesLinkNoHarness: `go list -deps` of each shipped binary
// contains no package of the simulator, the simulated OS, the harness, the
// workloads or the test fakes.
func TestShippedBinariesLinkNoHarness(t *testing.T) {
	root := repoRoot(t)
	layers, err := ParseLayers(readArchitecture(t, root))
	require.NoError(t, err)
	for _, binary := range shippedBinaries {
		command := exec.Command("go", "list", "-deps", "./"+binary)
		command.Dir = root
		output, err := command.Output()
		require.NoError(t, err, "go list -deps ./%s", binary)
		var deps []string
		for _, line := range strings.Split(strings.TrimSpace(string(output)), "\n") {
			path, _, _ := strings.Cut(line, " [") // a PGO variant is its path
			deps = append(deps, path)
		}
		require.Contains(t, deps, ModulePath+"/lease", "%s's deps were not listed", binary)
		require.Empty(t, ForbiddenDeps(layers, harnessLayers, deps), "%s links harness code", binary)
	}
}

// plantedLayers is a small layer table for the planted violations.
const plantedLayers = layersBegin + `
| layer | packages | may import | tests may also import |
|---|---|---|---|
| ` + "`engines`" + ` | ` + "`lease` `admission`" + ` | ` + "`engines` `github.com/google/uuid`" + ` | ` + "`fakes` `github.com/stretchr/testify`" + ` |
| ` + "`fakes`" + ` | ` + "`lease/leasetest`" + ` | ` + "`engines`" + ` | - |
| ` + "`models`" + ` | ` + "`models`" + ` | ` + "`github.com/anishathalye/porcupine`" + ` | - |
` + layersEnd

// TestImportRulesRejectPlantedViolations mutation-tests the checks: each
// planted edge, package or table change must be reported, the clean graph
// must not be.
func TestImportRulesRejectPlantedViolations(t *testing.T) {
	layers, err := ParseLayers(plantedLayers)
	require.NoError(t, err)
	clean := []Package{
		{Path: "lease", Imports: []string{"github.com/google/uuid"}, TestImports: []string{"github.com/stretchr/testify/require", "lease/leasetest"}},
		{Path: "admission", Imports: []string{"lease"}},
		{Path: "lease/leasetest", Imports: []string{"lease"}},
		{Path: "models", Imports: []string{"github.com/anishathalye/porcupine"}},
	}
	require.Empty(t, CheckLayers(layers, clean))
	planted := []struct {
		name   string
		change func([]Package) []Package
		want   string
	}{
		{"engine imports a fake", func(p []Package) []Package { p[1].Imports = append(p[1].Imports, "lease/leasetest"); return p },
			"admission (layer engines) imports lease/leasetest"},
		{"model imports an engine", func(p []Package) []Package { p[3].Imports = append(p[3].Imports, "lease"); return p },
			"models (layer models) imports lease"},
		{"engine imports another external module", func(p []Package) []Package {
			p[0].Imports = append(p[0].Imports, "github.com/google/btree")
			return p
		}, "lease (layer engines) imports github.com/google/btree"},
		{"fake's test imports testify", func(p []Package) []Package {
			p[2].TestImports = []string{"github.com/stretchr/testify/require"}
			return p
		}, "lease/leasetest (layer fakes) tests import github.com/stretchr/testify/require"},
		{"new package with no rule", func(p []Package) []Package { return append(p, Package{Path: "dirlease"}) },
			"dirlease is in no layer"},
		{"layer lists a package that is gone", func(p []Package) []Package { return p[1:] },
			"layer engines lists lease, which is not a package"},
	}
	for _, tc := range planted {
		t.Run(tc.name, func(t *testing.T) {
			packages := tc.change(clonePackages(clean))
			findings := CheckLayers(layers, packages)
			require.Len(t, findings, 1, "%v", findings)
			require.Contains(t, findings[0], tc.want)
			require.NotEqual(t, FormatGraph(clean), FormatGraph(packages), "the graph table shows the change")
		})
	}
	broken := strings.Replace(plantedLayers, "`lease/leasetest` | `engines` |", "`lease/leasetest` | `engines` `nowhere` |", 1)
	require.NotEqual(t, plantedLayers, broken)
	brokenLayers, err := ParseLayers(broken)
	require.NoError(t, err)
	require.Contains(t, strings.Join(CheckLayers(brokenLayers, clean), "\n"), "allows nowhere")
	require.Equal(t, []string{"lease/leasetest (layer fakes)"},
		ForbiddenDeps(layers, []string{"fakes"}, []string{"fmt", ModulePath + "/lease", ModulePath + "/lease/leasetest"}))
	graph := FormatGraph(clean)
	doc, err := ReplaceGraph("intro\n"+graphBegin+"\nold\n"+graphEnd+"\nend\n", graph)
	require.NoError(t, err)
	got, err := GraphSection(doc)
	require.NoError(t, err)
	require.Equal(t, graph, got, "the graph table round-trips")
}

func clonePackages(packages []Package) []Package {
	cloned := make([]Package, len(packages))
	for i, pkg := range packages {
		cloned[i] = Package{Path: pkg.Path, Imports: slices.Clone(pkg.Imports), TestImports: slices.Clone(pkg.TestImports)}
	}
	return cloned
}
