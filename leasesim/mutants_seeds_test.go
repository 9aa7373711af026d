package leasesim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/mutant"
	"github.com/leasekit/leasekit/internal/require"
)

// TestSaveMutantSeedReplacesTheMutantsSeed: a found row's shrunk seed is
// written under DIR/<mutant>/<engine>/ by its spec's name, with its replay
// line, and the mutant's older seeds of that engine (which drifted) are
// removed; the mutant's seeds of another engine, another mutant's seeds and
// rows with nothing to save are left alone.
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
	otherEngine := filepath.Join(dir, "selftest-breakempty", "another-engine", "violation-0000000000000000.seed")
	for _, path := range []string{stale, other, otherEngine} {
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
	require.FileExists(t, otherEngine, "the mutant's seed of another engine is kept")
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

// TestStoredSeedsPerEngine: --check-seeds replays the seeds of every
// engine, names the listed engines without one (its test: line must then
// fail), and refuses a seed of an engine the engine: line does not list.
func TestStoredSeedsPerEngine(t *testing.T) {
	for _, c := range []struct {
		name            string
		stored          []string
		seeds, unseeded int
		err             string
	}{
		{"every engine", []string{"admission", "dirlease"}, 2, 0, ""},
		{"one engine", []string{"dirlease"}, 1, 1, ""},
		{"none", nil, 0, 2, ""},
		{"an unlisted engine", []string{"admission", "lease"}, 0, 0, "a stored seed of engine lease, which the mutant's engine: line (admission,dirlease) does not list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for _, engine := range c.stored {
				path := filepath.Join(root, mutantSeedsDir, "m", engine, "violation-0000000000000000.seed")
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte("seed"), 0o644))
			}
			seeds, unseeded, err := storedSeedsPerEngine(root, mutant.Mutation{Name: "m", Engines: []string{"admission", "dirlease"}})
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, seeds, c.seeds)
			require.Len(t, unseeded, c.unseeded)
		})
	}
}
