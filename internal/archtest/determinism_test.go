package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// deterministicDirs are the packages ScanSource polices: the engines and
// their internal helpers (engineDirs), and the fakes the engines' tests run
// on, whose determinism those tests rely on, and the pure mapping from
// engine results to the models (internal/modelmap), which the simulator runs,
// and leasereal's logic (leasecli), which the simulated users run.
var deterministicDirs = append(slices.Clone(engineDirs), "lease/leasetest", "internal/modelmap", "leasecli")

// notDeterministic are the packages under the engines' trees that may reach
// the OS, each with the reason. Every package under lease/, admission/,
// dirlease/ and internal/ is in exactly one of the two lists.
var notDeterministic = map[string]string{
	"lease/osenv":            "the one adapter from the injected interfaces to the real OS",
	"internal/archtest":      "this checker: it reads the source tree and runs go list",
	"internal/fsconformance": "the FS conformance suite: it runs every script on the kernel too",
	"internal/mutant":        "the mutant harness: it copies the module and runs go test",
	"internal/doctable":      "the doc-table check: it reads and rewrites the Markdown docs",
	"internal/longtest":      "tests' switch: it reads the CI and LEASEKIT_LONG variables",
	"internal/require":       "tests' assertions: FileExists and its kin stat real paths",
	"internal/simgc":         "simulation programs' collector target: it reads GOGC from the environment",
}

// allowedFindings are the exact findings accepted in deterministicDirs, each
// with the reason; each must still occur, so none outlives its cause.
var allowedFindings = []struct{ file, rule, why string }{
	{"lease/leasetest/uid.go", `imports "os"`,
		"leasetest.UID is the test process's own uid (os.Getuid): the engines refuse files of another uid"},
}

func allowed(finding Finding) bool {
	for _, allowance := range allowedFindings {
		if strings.HasPrefix(finding.Position, allowance.file+":") && strings.HasPrefix(finding.Rule, allowance.rule) {
			return true
		}
	}
	return false
}

func TestEnginesReachOutsideOnlyThroughInjectedInterfaces(t *testing.T) {
	root := repoRoot(t)
	scanned := 0
	var accepted []Finding
	for _, dir := range deterministicDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "deterministic package %s has no Go files", dir)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			source, err := os.ReadFile(file)
			require.NoError(t, err)
			findings, err := ScanSource(strings.TrimPrefix(file, root+"/"), source)
			require.NoError(t, err)
			for _, finding := range findings {
				if allowed(finding) {
					accepted = append(accepted, finding)
					continue
				}
				t.Errorf("%s", finding)
			}
			scanned++
		}
	}
	require.Len(t, accepted, len(allowedFindings), "an allowed finding no longer occurs (remove it): %v", accepted)
	t.Logf("scanned %d deterministic source files", scanned)
}

// TestEveryEnginePackageIsScanned: a new package under the engines' trees
// is scanned or says why not, so the ban-list cannot silently miss one.
func TestEveryEnginePackageIsScanned(t *testing.T) {
	root := repoRoot(t)
	found := map[string]bool{}
	for _, tree := range []string{"lease", "admission", "dirlease", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, tree), func(path string, entry fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if entry.IsDir() && entry.Name() == "testdata" {
				return filepath.SkipDir
			}
			if !entry.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				found[strings.TrimPrefix(filepath.Dir(path), root+"/")] = true
			}
			return nil
		})
		require.NoError(t, err)
	}
	for dir := range found {
		_, exempt := notDeterministic[dir]
		require.True(t, slices.Contains(deterministicDirs, dir) != exempt,
			"package %s must be in exactly one of deterministicDirs and notDeterministic", dir)
	}
	for dir := range notDeterministic {
		require.True(t, found[dir], "notDeterministic lists %s, which has no Go files", dir)
	}
}

// TestScannerCatchesPlantedViolations mutation-tests the scanner: each
// planted line must be reported, and clean code must not be.
func TestScannerCatchesPlantedViolations(t *testing.T) {
	planted := []struct {
		name, source, rule string
	}{
		{"os import", `import "os"`, `imports "os"`},
		{"os/exec import", `import "os/exec"`, `imports "os/exec"`},
		{"syscall import", `import "syscall"`, `imports "syscall"`},
		{"unsafe import", `import "unsafe"`, `imports "unsafe"`},
		{"x/sys import", `import "golang.org/x/sys/unix"`, `imports "golang.org/x/sys/unix"`},
		{"global rand", `import "math/rand"`, `imports "math/rand"`},
		{"rand v2", `import "math/rand/v2"`, `imports "math/rand/v2"`},
		{"other google module", `import "github.com/google/btree"`, "only github.com/google/uuid"},
		{"time.Now", "import \"time\"\nvar _ = time.Now()", "time.Now"},
		{"renamed time.Sleep", "import clock \"time\"\nfunc f() { clock.Sleep(1) }", "time.Sleep"},
		{"time.After", "import \"time\"\nvar _ = time.After(1)", "time.After"},
		{"time.NewTicker", "import \"time\"\nvar _ = time.NewTicker(1)", "time.NewTicker"},
		{"goroutine", "func f() { go f() }", "starts a goroutine"},
		{"select", "func f(a, b chan int) { select { case <-a: case <-b: } }", "uses select"},
		{"one-case select", "func f(a chan int) { select { case <-a: default: } }", "uses select"},
		{"range over map variable", "var m = map[int]int{}\nfunc f() { for k := range m { _ = k } }", "ranges over map m"},
		{"range over made map", "func f() { m := make(map[int]int); for k := range m { _ = k } }", "ranges over map m"},
		{"range over map parameter", "func f(m map[int]int) { for k := range m { _ = k } }", "ranges over map m"},
		{"range over map field", "type s struct{ table map[int]int }\nfunc (v s) f() { for k := range v.table { _ = k } }", "ranges over map field table"},
		{"range over map literal", "func f() { for k := range (map[int]int{}) { _ = k } }", "ranges over a map literal"},
		{"range over maps.Keys", "import \"maps\"\nfunc f(m map[int]int) []int { var o []int; for k := range maps.Keys(m) { o = append(o, k) }; return o }", "uses maps.Keys outside slices.Sorted"},
		{"maps.Values collected", "import (\n\"maps\"\n\"slices\"\n)\nvar m = map[int]int{}\nvar _ = slices.Collect(maps.Values(m))", "uses maps.Values outside slices.Sorted"},
		{"renamed maps.All", "import mp \"maps\"\nvar m = map[int]int{}\nvar _ = mp.All(m)", "uses maps.All outside slices.Sorted"},
	}
	for _, tc := range planted {
		t.Run(tc.name, func(t *testing.T) {
			findings, err := ScanSource("planted.go", []byte("package p\n"+tc.source+"\n"))
			require.NoError(t, err)
			require.Len(t, findings, 1, "findings: %v", findings)
			require.Contains(t, findings[0].Rule, tc.rule)
		})
	}
	clean := "package p\nimport (\n\"maps\"\n\"slices\"\n\"time\"\n\"github.com/google/uuid\"\n)\n" +
		"var d = time.Second\nvar _ = uuid.NewString\nfunc f(c lease) { c.Now(); c.Sleep() }\ntype lease interface{ Now(); Sleep() }\n" +
		"var table = map[string]int{}\nvar list = []string{}\n" +
		"func g() int { n := table[\"a\"]; for _, k := range slices.Sorted(maps.Keys(table)) { n += table[k] }; for range list {}; return n }\n"
	findings, err := ScanSource("clean.go", []byte(clean))
	require.NoError(t, err)
	require.Empty(t, findings)
}
