package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
)

// benchSide is a one-engine report: seeds over cpu, allocs objects.
func benchSide(seeds int, cpu time.Duration, allocs uint64, hash uint64) *BenchReport {
	return &BenchReport{Engines: []EngineBench{{Engine: "lease", Seeds: seeds, Steps: int64(seeds) * 100, CPU: cpu,
		Run: cpu * 9 / 10, Check: cpu / 10, Allocs: allocs, Hash: hash}}}
}

func TestBenchComparisonPrintsMediansAndPairedRatios(t *testing.T) {
	comparison := &BenchComparison{Baseline: "old", Current: "new", Rounds: [][2]*BenchReport{
		{benchSide(100, time.Second, 0, 7), benchSide(100, time.Second/2, 1000, 7)}, // 2x
		{benchSide(100, time.Second, 0, 7), benchSide(100, time.Second/3, 1000, 7)}, // 3x
		{benchSide(100, time.Second, 0, 7), benchSide(100, time.Second/4, 1000, 7)}, // 4x
	}}
	var out strings.Builder
	require.NoError(t, comparison.WriteMarkdown(&out))
	table := out.String()
	for _, row := range []string{
		"| lease | seeds/s/core | 100.0 | 300.0 | 3.00x (2.00-4.00) |",
		"| lease | allocs/seed | n/a | 10 | n/a |", // the baseline's report has no allocations
		"| lease | porcupine share | 10.0% | 10.0% | 1.00x (1.00-1.00) |",
		"| lease | run hash | `0000000000000007` | `0000000000000007` | same runs |",
	} {
		require.Contains(t, table, row)
	}
	comparison.Rounds[0][1].Engines[0].Hash = 8
	out.Reset()
	require.NoError(t, comparison.WriteMarkdown(&out))
	require.Contains(t, out.String(), "| moved |")
	require.Error(t, (&BenchComparison{}).WriteMarkdown(&out))
}
