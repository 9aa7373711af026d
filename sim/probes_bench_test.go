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

// porcupineP99Max is the target p99 of one history's check, with room for
// a loaded CI machine (the measured p99 is well under it).
const porcupineP99Max = 10 * time.Millisecond

// TestPorcupineTimePerHistory measures porcupine's time per history for
// each engine's campaign histories and reports p50/p99; it fails when the
// p99 is over the target (10 ms) under CI, where the machine is not shared.
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
		if p99 > porcupineP99Max {
			message := "%s: porcupine p99 %v is over the %v target"
			if os.Getenv("CI") != "" {
				t.Errorf(message, name, p99, porcupineP99Max)
			} else {
				t.Logf(message+" (not failing outside CI: the machine is shared)", name, p99, porcupineP99Max)
			}
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
