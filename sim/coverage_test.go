package sim

import (
	"slices"
	"testing"
)

// TestCallCoverageChangesNoRun: the call trace is recorded only under
// Config.Coverage, and a run with it is the same run (hash stream and
// decisions) as without it; its points are distinct, and a process's
// points and edges are counted.
func TestCallCoverageChangesNoRun(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		for _, plan := range []*FaultPlan{nil, hotPlan()} {
			plain := churnConfig(seed, plan)
			plain.HashStream = true
			off := Run(plain)
			covered := churnConfig(seed, plan)
			covered.HashStream, covered.Coverage = true, true
			on := Run(covered)
			if len(off.Calls) != 0 {
				t.Fatalf("seed %d: %d call points without Config.Coverage", seed, len(off.Calls))
			}
			if !slices.Equal(off.HashStream, on.HashStream) || !slices.Equal(off.Decisions, on.Decisions) {
				t.Fatalf("seed %d: coverage changed the run", seed)
			}
			if len(on.Calls) == 0 {
				t.Fatalf("seed %d: no call points under Config.Coverage", seed)
			}
			hits, seen := 0, map[uint64]bool{}
			for _, c := range on.Calls {
				if seen[c.Hash] || c.Hits < 1 || c.At > c.BucketAt || c.BucketAt > len(on.Decisions) {
					t.Fatalf("seed %d: bad call point %+v", seed, c)
				}
				seen[c.Hash] = true
				hits += c.Hits
			}
			// Every step is one point and one edge of its process.
			if hits != 2*on.Steps {
				t.Fatalf("seed %d: %d hits over %d steps, want two per step", seed, hits, on.Steps)
			}
		}
	}
}
