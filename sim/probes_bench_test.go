package sim

import (
	"os"
	"slices"
	"testing"
	"time"
)

// checkTimes runs seeds seeds of an engine's campaign and times the
// porcupine check of each history, the fastest of checkRepeats checks (on
// a shared machine one check's wall time also counts other processes and
// GC pauses); it returns the sorted durations.
func checkTimes(c engineCampaign, seeds int) []time.Duration {
	times := make([]time.Duration, 0, seeds)
	for i := 0; i < seeds; i++ {
		seed := uint64(i + 1)
		plan := LeaseCampaignPlan(seed ^ hashString(c.name))
		r := Run(Config{Seed: seed, Faults: &plan, Setup: c.setup()})
		fastest := time.Duration(0)
		for range checkRepeats {
			start := time.Now()
			_ = c.check(r.History)
			if d := time.Since(start); fastest == 0 || d < fastest {
				fastest = d
			}
		}
		times = append(times, fastest)
	}
	slices.Sort(times)
	return times
}

// checkRepeats is how often checkTimes checks each history.
const checkRepeats = 3

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// porcupineP99Target is the p99 the campaigns must meet (measured: under
// 1 ms for every engine, fastest of checkRepeats).
const porcupineP99Target = 10 * time.Millisecond

// TestPorcupineTimePerHistory measures porcupine's time per history for
// each engine's campaign histories and reports p50/p99; a p99 over the
// 10 ms target fails under CI (elsewhere the machine may be shared with
// other test runs, so it is only reported).
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
		switch {
		case p99 <= porcupineP99Target:
		case os.Getenv("CI") != "":
			t.Errorf("%s: porcupine p99 %v is over the %v target", name, p99, porcupineP99Target)
		default:
			t.Logf("%s: porcupine p99 %v is over the %v target (not failing outside CI)", name, p99, porcupineP99Target)
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
