package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/leasekit/leasekit"

// engineDirs are the packages whose code must be deterministic. Test files
// are exempt (they run on the real OS on purpose); lease/osenv is the one
// place production code touches the OS; lease/leasetest holds test fakes
// (scanned by the determinism rules too: see determinism_test.go).
var engineDirs = []string{"lease", "admission", "dirlease", "internal/statefile", "internal/statecas", "internal/seederr", "internal/fspath"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "archtest must run from internal/archtest")
	return root
}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func listPackages(t *testing.T, root string) []listedPackage {
	t.Helper()
	command := exec.Command("go", "list", "-json", "./...")
	command.Dir = root
	output, err := command.Output()
	require.NoError(t, err, "go list failed")
	decoder := json.NewDecoder(strings.NewReader(string(output)))
	var packages []listedPackage
	for decoder.More() {
		var pkg listedPackage
		require.NoError(t, decoder.Decode(&pkg))
		packages = append(packages, pkg)
	}
	return packages
}

// importRule says which non-standard imports a package may have.
func allowedImport(pkg, imported string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, modulePath), "/")
	internal := strings.TrimPrefix(strings.TrimPrefix(imported, modulePath), "/")
	isOurs := strings.HasPrefix(imported, modulePath)
	switch {
	case rel == "lease/osenv":
		return imported == modulePath+"/lease" || imported == "github.com/google/uuid" ||
			strings.HasPrefix(imported, "golang.org/x/sys/")
	case isEngine(rel):
		return imported == "github.com/google/uuid" || (isOurs && isEngine(internal))
	case rel == "simfs" || rel == "simproc":
		return imported == modulePath+"/lease"
	case rel == "models":
		return imported == "github.com/anishathalye/porcupine"
	}
	return true
}

func isEngine(rel string) bool {
	for _, dir := range engineDirs {
		if rel == dir {
			return true
		}
	}
	return false
}

func TestImportDirection(t *testing.T) {
	root := repoRoot(t)
	for _, pkg := range listPackages(t, root) {
		for _, imported := range pkg.Imports {
			if isStandard(imported) {
				continue
			}
			if !allowedImport(pkg.ImportPath, imported) {
				t.Errorf("%s imports %s, which ARCHITECTURE.md's dependency direction forbids", pkg.ImportPath, imported)
			}
		}
	}
}

// isStandard: standard-library import paths have no dot in their first element.
func isStandard(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

func TestImportRulesRejectPlantedEdges(t *testing.T) {
	forbidden := [][2]string{
		{modulePath + "/lease", "golang.org/x/sys/unix"},
		{modulePath + "/admission", modulePath + "/lease/osenv"},
		{modulePath + "/models", modulePath + "/lease"},
		{modulePath + "/simfs", modulePath + "/lease/osenv"},
		{modulePath + "/dirlease", modulePath + "/simfs"},
	}
	for _, edge := range forbidden {
		require.False(t, allowedImport(edge[0], edge[1]), "%s -> %s must be forbidden", edge[0], edge[1])
	}
	require.True(t, allowedImport(modulePath+"/admission", modulePath+"/lease"))
	require.True(t, allowedImport(modulePath+"/dirlease", modulePath+"/internal/statefile"))
	require.True(t, allowedImport(modulePath+"/models", "github.com/anishathalye/porcupine"))
}
