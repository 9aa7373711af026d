package leasesim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// TestSaveMutantSeedReplacesTheMutantsSeed: a found row's shrunk seed is
// written under DIR/<mutant>/<engine>/ by its spec's name, with its replay
// line, and the mutant's older seeds (which drifted) are removed; another
// mutant's seeds and rows with nothing to save are left alone.
func TestSaveMutantSeedReplacesTheMutantsSeed(t *testing.T) {
	checked, err := filepath.Glob("../campaign/testdata/mutant-seeds/selftest-breakempty/*/*.seed")
	require.NoError(t, err)
	require.NotEmpty(t, checked)
	text, err := os.ReadFile(checked[0])
	require.NoError(t, err)
	file, err := campaign.ParseSeedFile(text)
	require.NoError(t, err)

	dir := t.TempDir()
	stale := filepath.Join(dir, "selftest-breakempty", file.Spec.Engine, "violation-0000000000000000.seed")
	other := filepath.Join(dir, "another-mutant", file.Spec.Engine, "violation-0000000000000000.seed")
	for _, path := range []string{stale, other} {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	}
	row := MutantRow{Name: "selftest-breakempty", Hunt: campaign.HuntResult{Found: true, ShrunkSeed: string(text)}}
	path, err := saveMutantSeed(dir, row)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "selftest-breakempty", file.Spec.Engine, file.Name()), path)
	written, err := campaign.ReadSeedFile(path)
	require.NoError(t, err)
	require.Equal(t, file.Spec, written.Spec)
	require.NoFileExists(t, stale, "the mutant's older seed is replaced")
	require.FileExists(t, other, "another mutant's seeds are not touched")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), "# replay (under the mutant): go run -overlay OVERLAY.json ./cmd/leasesim replay "+filepath.ToSlash(path))

	for _, nothing := range []MutantRow{
		{Name: "not-found", Hunt: campaign.HuntResult{ShrunkSeed: string(text)}},
		{Name: "not-shrunk", Hunt: campaign.HuntResult{Found: true}},
		{Name: "broken", Error: "stale", Hunt: campaign.HuntResult{Found: true, ShrunkSeed: string(text)}},
	} {
		path, err := saveMutantSeed(dir, nothing)
		require.NoError(t, err)
		require.Empty(t, path, nothing.Name)
		require.NoDirExists(t, filepath.Join(dir, nothing.Name))
	}
	_, err = saveMutantSeed(dir, MutantRow{Name: "garbled", Hunt: campaign.HuntResult{Found: true, ShrunkSeed: "not a seed"}})
	require.Error(t, err)
}
