package leasesim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/require"
)

// TestMergeMinimize: merge --corpus NEW --minimize writes a smaller
// corpus into a new directory and leaves the source alone; it refuses a
// directory that is not empty and a call without sources.
func TestMergeMinimize(t *testing.T) {
	dir := t.TempDir()
	source := filepath.Join(dir, "big")
	code, _, stderr := leasesim("run", "--engine", "selftest", "--seeds", "200", "--workers", "1", "--search", "guided", "--corpus", source)
	require.Equal(t, campaign.ExitOK, code, stderr)
	before := entryNames(t, filepath.Join(source, "selftest"))
	small := filepath.Join(dir, "small")
	code, stdout, stderr := leasesim("merge", "--corpus", small, "--minimize", "--entries-max", "3", source)
	require.Equal(t, campaign.ExitOK, code, stderr)
	require.Regexp(t, `selftest: \d+ entries -> 3, reaching \d+ points`, stdout)
	require.Len(t, entryNames(t, filepath.Join(small, "selftest")), 3)
	require.Equal(t, before, entryNames(t, filepath.Join(source, "selftest")), "the source corpus changed")
	code, _, stderr = leasesim("merge", "--corpus", small, "--minimize", source)
	require.Equal(t, campaign.ExitUsage, code)
	require.Contains(t, stderr, "is not empty")
	code, _, stderr = leasesim("merge", "--corpus", filepath.Join(dir, "none"), "--minimize")
	require.Equal(t, campaign.ExitUsage, code)
	require.Contains(t, stderr, "give the corpus directories")
}

func entryNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, len(entries))
	for i, entry := range entries {
		names[i] = entry.Name()
	}
	return names
}
