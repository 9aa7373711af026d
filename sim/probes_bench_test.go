package sim

import (
	"os"
	"slices"
	"testing"
	"time"
)

// checkTimes runs seeds seeds of an engine's campaign and times the
// porcupine check of each history; it returns the sorted durations.
func checkTimes(c engineCampaign, seeds int) []time.Duration {
	times := make([]time.Duration, 0, seeds)
	for i := 0; i < seeds; i++ {
		seed := uint64(i + 1)
		plan := LeaseCampaignPlan(seed ^ hashString(c.name))
		r := Run(Config{Seed: seed, Faults: &plan, Setup: c.setup()})
		start := time.Now()
		_ = c.check(r.History)
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// porcupineP99Target is the p99 the campaigns aim for; porcupineP99Max
// is the regression guard a CI run enforces (the measured p99 on a shared
// 2-core machine is 3-30 ms, dominated by a few histories with many
// overlapping unknown-outcome operations).
const (
	porcupineP99Target = 10 * time.Millisecond
	porcupineP99Max    = 100 * time.Millisecond
)

// TestPorcupineTimePerHistory measures porcupine's time per history for
// each engine's campaign histories and reports p50/p99; it notes a p99 over
// the 10 ms target and fails, under CI, one over the regression guard.
func TestPorcupineTimePerHistory(t *testing.T) {
	seeds := 100
	switch {
	case os.Getenv("CI") != "" || os.Getenv("LEASEKIT_LONG") == "1":
		seeds = 500
	case testing.Short():
		seeds = 30
	}
	for _, name := range []string{"lease", "admission", "dirlease"} {
		times := checkTimes(engineCampaigns[name], seeds)
		p50, p99, worst := percentile(times, 0.5), percentile(times, 0.99), times[len(times)-1]
		t.Logf("%s: %d histories: porcupine p50 %v p99 %v max %v", name, len(times), p50, p99, worst)
		if p99 > porcupineP99Target {
			t.Logf("%s: porcupine p99 %v is over the %v target", name, p99, porcupineP99Target)
		}
		if p99 > porcupineP99Max && os.Getenv("CI") != "" {
			t.Errorf("%s: porcupine p99 %v is over the %v regression guard", name, p99, porcupineP99Max)
		}
	}
}

// BenchmarkPorcupinePerHistory times one history check per iteration, over
// a fixed sample of campaign histories of each engine.
func BenchmarkPorcupinePerHistory(b *testing.B) {
	for _, name := range []string{"lease", "admission", "dirlease"} {
		c := engineCampaigns[name]
		var histories [][]Operation
		for seed := uint64(1); seed <= 50; seed++ {
			plan := LeaseCampaignPlan(seed ^ hashString(c.name))
			histories = append(histories, Run(Config{Seed: seed, Faults: &plan, Setup: c.setup()}).History)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				_ = c.check(histories[i%len(histories)])
			}
		})
	}
}
