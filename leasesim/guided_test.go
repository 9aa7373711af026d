package leasesim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// TestGuidedRunCorpusAndMerge: run --search guided --corpus writes a
// corpus per shard, a second run resumes it (the entries are replayed, not
// re-added), and merge --corpus unions the shards.
func TestGuidedRunCorpusAndMerge(t *testing.T) {
	dir := t.TempDir()
	counts := map[string]int{}
	for _, shard := range []string{"0/2", "1/2"} {
		corpus := filepath.Join(dir, "shard"+shard[:1])
		code, stdout, stderr := leasesim("run", "--engine", "selftest", "--seeds", "60", "--shard", shard, "--json",
			"--workers", "2", "--search", "guided", "--corpus", corpus)
		require.Equal(t, campaign.ExitOK, code, stderr)
		var report campaign.Report
		require.NoError(t, json.Unmarshal([]byte(stdout), &report))
		require.Equal(t, 60, report.Runs)
		require.Positive(t, report.Coverage["selftest"])
		entries, err := os.ReadDir(filepath.Join(corpus, "selftest"))
		require.NoError(t, err)
		require.NotEmpty(t, entries)
		counts[corpus] = len(entries)
	}
	merged := filepath.Join(dir, "merged")
	code, stdout, stderr := leasesim("merge", "--corpus", merged, filepath.Join(dir, "shard0"), filepath.Join(dir, "shard1"))
	require.Equal(t, campaign.ExitOK, code, stderr)
	require.Contains(t, stdout, "entries added")
	entries, err := os.ReadDir(filepath.Join(merged, "selftest"))
	require.NoError(t, err)
	require.LessOrEqual(t, len(entries), counts[filepath.Join(dir, "shard0")]+counts[filepath.Join(dir, "shard1")])
	require.GreaterOrEqual(t, len(entries), max(counts[filepath.Join(dir, "shard0")], counts[filepath.Join(dir, "shard1")]))
	code, _, stderr = leasesim("run", "--engine", "selftest", "--seeds", "20", "--search", "guided", "--corpus", merged, "--workers", "1")
	require.Equal(t, campaign.ExitOK, code, stderr)
	require.Contains(t, stderr, "corpus "+merged)
	code, _, stderr = leasesim("run", "--engine", "selftest", "--seeds", "1", "--search", "sideways")
	require.Equal(t, campaign.ExitUsage, code, stderr)
}
