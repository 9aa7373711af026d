package dirleasework_test

import (
	"testing"

	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/dirleasework"
)

// TestClaimSymlinksAreRefusedNeverFollowed runs dirlease seeds with only
// the co-tenant on, firing often: every run must pass (no call follows a
// symlink at a claim file: a recovery that read a claim through one and
// succeeded is a violation, and what a link names must not change), and
// the hazard must be reached: links put at once and raced between a
// listing and its reads, dangling ones, refusals by recoveries and owners,
// and the operator's repair.
func TestClaimSymlinksAreRefusedNeverFollowed(t *testing.T) {
	const seeds = 150
	var plan sim.FaultPlan
	plan.Set("cotenant", 0.02)
	probes := map[string]int{}
	for seed := uint64(1); seed <= seeds; seed++ {
		r := sim.Run(sim.Config{Seed: seed, Faults: &plan, Setup: dirleasework.DirleaseWorkload(dirleasework.DirleaseOptions{})})
		if r.Outcome != sim.OutcomeOK {
			t.Fatalf("seed %d: %s: %s", seed, r.Outcome, r.Message)
		}
		if err := dirleasework.CheckDirleaseHistory(r.History); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for name, count := range r.Probes {
			probes[name] += count
		}
	}
	for _, name := range []string{
		"dirlease-cotenant-symlink-claim",
		"dirlease-cotenant-symlink-claim-dangling",
		"dirlease-cotenant-symlink-claim-raced",
		"dirlease-claim-symlink-refused",
		"dirlease-claim-symlink-listed-refused",
		"dirlease-claim-symlink-cas-refused",
		"dirlease-operator-claim-symlink-repaired",
	} {
		if probes[name] == 0 {
			t.Errorf("%s never fired in %d seeds", name, seeds)
		}
	}
}
