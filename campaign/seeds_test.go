package campaign

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// regressionSeeds is the repository's seed directory: runs that once failed
// (since fixed) or reached a rare state. Every one must pass now.
const regressionSeeds = "../testdata/seeds"

// mutantSeeds holds seed files found under a mutant (a planted bug, see
// mutants/): they fail only with the mutant overlaid, so here, on the real
// code, they must pass; cmd/leasesim's mutant test replays them under the
// overlay and requires their failure.
const mutantSeeds = "testdata/mutant-seeds"

func seedFiles(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".seed") {
			paths = append(paths, path)
		}
		return nil
	})
	require.NoError(t, err)
	return paths
}

// TestSeedFilesPassAndReplayIdentically replays every seed file twice: the
// traces must agree bit for bit, and the run must pass. A regression seed
// that fails again means its bug is back.
func TestSeedFilesPassAndReplayIdentically(t *testing.T) {
	paths := append(seedFiles(t, regressionSeeds), seedFiles(t, mutantSeeds)...)
	require.NotEmpty(t, paths, "no seed files under %s or %s", regressionSeeds, mutantSeeds)
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			file, err := ReadSeedFile(path)
			require.NoError(t, err)
			replay, err := ReplayTwice(file.Spec)
			require.NoError(t, err, "replay go run ./cmd/leasesim replay %s", strings.TrimPrefix(path, "../"))
			require.True(t, replay.Finding.OK(), "%s fails again (recorded: %v): %s\nreplay: go run ./cmd/leasesim replay %s",
				path, file.Expect, replay.Finding.Message, strings.TrimPrefix(path, "../"))
		})
	}
}

func TestSeedDirectoriesHoldOnlyCurrentVersionFiles(t *testing.T) {
	for _, root := range []string{regressionSeeds, mutantSeeds} {
		for _, path := range seedFiles(t, root) {
			file, err := ReadSeedFile(path)
			require.NoError(t, err, path)
			require.Equal(t, filepath.Base(filepath.Dir(path)), file.Spec.Engine, "%s: <dir>/<engine>/<name>.seed", path)
			require.Equal(t, filepath.Base(path), file.Name(), "%s: name is the spec's hash", path)
		}
	}
}
