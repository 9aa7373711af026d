package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// engineDirs are the packages whose code must be deterministic. Test files
// are exempt (they run on the real OS on purpose); lease/osenv is the one
// place production code touches the OS; lease/leasetest holds test fakes.
var engineDirs = []string{"lease", "admission", "dirlease", "internal/statefile", "internal/statecas", "internal/seederr", "internal/fspath"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "archtest must run from internal/archtest")
	return root
}

func TestEnginesReachOutsideOnlyThroughInjectedInterfaces(t *testing.T) {
	root := repoRoot(t)
	scanned := 0
	for _, dir := range engineDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "engine package %s has no Go files", dir)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			source, err := os.ReadFile(file)
			require.NoError(t, err)
			findings, err := ScanSource(strings.TrimPrefix(file, root+"/"), source)
			require.NoError(t, err)
			for _, finding := range findings {
				t.Errorf("%s", finding)
			}
			scanned++
		}
	}
	t.Logf("scanned %d engine source files", scanned)
}

// TestScannerCatchesPlantedViolations mutation-tests the scanner: each
// planted line must be reported, and clean code must not be.
func TestScannerCatchesPlantedViolations(t *testing.T) {
	planted := []struct {
		name, source, rule string
	}{
		{"os import", `import "os"`, `imports "os"`},
		{"syscall import", `import "syscall"`, `imports "syscall"`},
		{"x/sys import", `import "golang.org/x/sys/unix"`, `imports "golang.org/x/sys/unix"`},
		{"global rand", `import "math/rand"`, `imports "math/rand"`},
		{"rand v2", `import "math/rand/v2"`, `imports "math/rand/v2"`},
		{"other google module", `import "github.com/google/btree"`, "only github.com/google/uuid"},
		{"time.Now", "import \"time\"\nvar _ = time.Now()", "time.Now"},
		{"renamed time.Sleep", "import clock \"time\"\nfunc f() { clock.Sleep(1) }", "time.Sleep"},
		{"time.After", "import \"time\"\nvar _ = time.After(1)", "time.After"},
		{"goroutine", "func f() { go f() }", "starts a goroutine"},
		{"select", "func f(a, b chan int) { select { case <-a: case <-b: } }", "select with several cases"},
	}
	for _, tc := range planted {
		t.Run(tc.name, func(t *testing.T) {
			findings, err := ScanSource("planted.go", []byte("package p\n"+tc.source+"\n"))
			require.NoError(t, err)
			require.Len(t, findings, 1, "findings: %v", findings)
			require.Contains(t, findings[0].Rule, tc.rule)
		})
	}
	clean := "package p\nimport (\n\"time\"\n\"github.com/google/uuid\"\n)\nvar d = time.Second\nvar _ = uuid.NewString\nfunc f(c lease) { c.Now(); c.Sleep() }\ntype lease interface{ Now(); Sleep() }\n"
	findings, err := ScanSource("clean.go", []byte(clean))
	require.NoError(t, err)
	require.Empty(t, findings)
}
