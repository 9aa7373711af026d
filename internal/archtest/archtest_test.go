package archtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// engineDirs are the packages whose code must be deterministic. Test files
// are exempt (they run on the real OS on purpose); lease/osenv is the one
// place production code touches the OS; lease/leasetest holds test fakes
// (scanned by the determinism rules too: see determinism_test.go).
var engineDirs = []string{"lease", "admission", "dirlease", "internal/statefile", "internal/statecas", "internal/seederr", "internal/fspath", "internal/procfs"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "archtest must run from internal/archtest")
	return root
}
