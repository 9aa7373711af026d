package workload_test

import (
	"slices"
	"testing"
	"time"

	"github.com/leasekit/leasekit/sim"
)

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// BenchmarkPorcupinePerHistory times one porcupine check per iteration, over
// a fixed sample of campaign histories of each engine, and reports the p50
// and p99 of the per-history time. The target (issue 6) is p99 < 10 ms; it
// is a benchmark figure, not a test assertion, because wall time on a shared
// machine also counts other processes (measured on a quiet machine: under
// 1 ms for every engine; see docs/BENCH.md for how to rerun).
//
//	go test ./workload -run '^$' -bench PorcupinePerHistory -cpu 1
func BenchmarkPorcupinePerHistory(b *testing.B) {
	for _, name := range []string{"lease", "admission", "dirlease"} {
		c := engineCampaigns[name]
		var histories [][]sim.Operation
		for seed := uint64(1); seed <= 50; seed++ {
			plan := sim.AllFaultsPlan(seed ^ nameHash(c.name))
			histories = append(histories, sim.Run(sim.Config{Seed: seed, Faults: &plan, Setup: c.setup()}).History)
		}
		b.Run(name, func(b *testing.B) {
			var times []time.Duration
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if err := c.check(histories[i%len(histories)]); err != nil {
					b.Fatalf("%s history %d: %v", name, i%len(histories), err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(percentile(times, 0.50).Nanoseconds())/1e6, "p50-ms")
			b.ReportMetric(float64(percentile(times, 0.99).Nanoseconds())/1e6, "p99-ms")
		})
	}
}
