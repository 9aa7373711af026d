package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// sourceLinesMax is the most lines a non-test Go file may have: a longer
// one mixes concerns that want files (or packages) of their own.
const sourceLinesMax = 800

// TestNoSourceFileIsTooLong walks the module (testdata and hidden
// directories aside) and fails on every non-test .go file over
// sourceLinesMax lines.
func TestNoSourceFileIsTooLong(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if lines := bytes.Count(data, []byte("\n")); lines > sourceLinesMax {
			t.Errorf("%s has %d lines, more than %d: split it by concern", strings.TrimPrefix(path, root+"/"), lines, sourceLinesMax)
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, checked)
}
