package leasesim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
)

// A profile is gzip-compressed protobuf: it must exist, be non-empty and
// start with gzip's magic once the command returns.
func TestCPUProfileIsWrittenByRunAndBench(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--engine", "lease", "--seeds", "3", "--workers", "1"},
		{"bench", "--engine", "lease", "--seeds", "2", "--workers", "1", "--rounds", "2", "--repeat", "1"},
	} {
		path := filepath.Join(t.TempDir(), "cpu.pprof")
		code, _, stderr := leasesim(append(args, "--cpuprofile", path)...)
		require.Equal(t, campaign.ExitOK, code, "%v: %s", args, stderr)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Greater(t, len(data), 2, "%v", args)
		require.Equal(t, []byte{0x1f, 0x8b}, data[:2], "%v: not a gzip-compressed profile", args)
	}
	code, _, stderr := leasesim("run", "--seeds", "1", "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "p"))
	require.Equal(t, campaign.ExitUsage, code, stderr)
	require.Contains(t, stderr, "--cpuprofile")
}
