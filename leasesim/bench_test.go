package leasesim

import (
	"encoding/json"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
)

func TestBenchPrintsTheTableAndJSON(t *testing.T) {
	code, stdout, stderr := leasesim("bench", "--engine", "lease", "--seeds", "2", "--workers", "1", "--rounds", "3",
		"--real", "--real-dir", t.TempDir())
	require.Equal(t, campaign.ExitOK, code, stderr)
	for _, want := range []string{"steps/s/core", "seeds/s/core", "porcupine share", "simulated s per wall s",
		"| 1 | 2 |", "| simfs | 3 |", "| osenv ", "sim/real ratio"} {
		require.Contains(t, stdout, want)
	}
	code, stdout, stderr = leasesim("bench", "--engine", "lease", "--seeds", "1", "--workers", "1", "--rounds", "2", "--json")
	require.Equal(t, campaign.ExitOK, code, stderr)
	var report campaign.BenchReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &report))
	require.Len(t, report.Engines, 1)
	require.Len(t, report.OpMix, 1, "no --real, no real-OS row")
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--workers", "0"}, {"bench", "--workers", "x"}, {"bench", "--engine", "nope"},
		{"bench", "--real", "--real-dir", "/no/such/dir"}, {"bench", "--baseline", "/bin/true", "--compare-rounds", "0"},
	} {
		code, _, stderr := leasesim(args...)
		require.Equal(t, campaign.ExitUsage, code, "%v: %s", args, stderr)
	}
}

// A baseline that prints no report fails the comparison with its name.
func TestBenchBaselineRefusesABinaryWithoutAReport(t *testing.T) {
	code, _, stderr := leasesim("bench", "--baseline", "/bin/true", "--compare-rounds", "1", "--seeds", "1", "--engine", "lease")
	require.NotEqual(t, campaign.ExitOK, code)
	require.Contains(t, stderr, "/bin/true printed no report")
}
