package leasework

import (
	"testing"

	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// TestLeasePowerLossTearsATemp: the campaign's power losses (aimed at the
// write window of a new file, sim/writewindow.go) tear a temp the lease
// engine wrote (simfs's tear model), the leftover watch sees it, and the
// runs that tore one are clean: the engine swept it or left it alone, and
// never read it as a record.
func TestLeasePowerLossTearsATemp(t *testing.T) {
	const seeds = 400
	torn, aimed := 0, 0
	for seed := uint64(1); seed <= seeds; seed++ {
		r, finding := leaseSeed(seed, false)
		if r.Probes[workkit.ProbePowerLossTorn] == 0 {
			continue
		}
		torn++
		aimed += r.Probes[sim.ProbePowerLossInWriteWindow]
		if finding != nil {
			t.Errorf("a run with a torn temp failed: %v", finding)
		}
	}
	t.Logf("%d of %d seeds tore a temp (%d power losses aimed at a write window in them)", torn, seeds, aimed)
	if torn == 0 || aimed == 0 {
		t.Fatalf("no aimed power loss tore a temp in %d seeds", seeds)
	}
}
