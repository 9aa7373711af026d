package mtimelock_test

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/mtimelock"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the heartbeat lock broken by a paused holder: a
// stopped holder stops touching its lock file, which grows stale.
func TestMtimeLockIsBrokenByAPausedHolder(t *testing.T) {
	examplekit.RequireFinds(t, mtimelock.Engine(), simtest.Options{Seeds: 300, Faults: "stop=0.01"}, "(paused holder)")
}

// The harness finds the heartbeat lock broken by a wall-clock step: the
// contender's clock races past the holder's last touch.
func TestMtimeLockIsBrokenByAClockStep(t *testing.T) {
	examplekit.RequireFinds(t, mtimelock.Engine(), simtest.Options{Seeds: 300, Faults: "clockstep=0.01"}, "(clock step)")
}

// run is a campaign of the lock's engine.
func run(t *testing.T, seeds int, faults campaign.FaultSetting) *campaign.Report {
	t.Helper()
	engine := mtimelock.Engine()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: seeds, BaseSeed: 1, Workers: 1, Faults: faults,
	})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// Without faults the heartbeats keep the lock: holders in critical
// sections up to 640ms, longer than Stale, keep it, and every holder
// touched its file. (Under mutant simfs-chtimes-ignored, a Chtimes that
// leaves the time alone, holders are taken for dead here.)
func TestMtimeLockHoldsWithoutFaults(t *testing.T) {
	report := run(t, 300, campaign.FaultSetting{})
	if len(report.Failures) > 0 {
		f := report.FirstFailures()[0]
		t.Fatalf("%d of %d runs failed; seed %d: %s: %s", len(report.Failures), report.Runs, f.Seed, f.Class, f.Message)
	}
	if report.Probes[sim.ProbeChtimes] == 0 {
		t.Fatalf("no holder touched its lock file: %v", report.Probes)
	}
}

// A swarm campaign reaches every probe the engine declares, among them a
// touch stamped on a host whose clock a step had moved.
func TestMtimeLockCampaignReachesItsProbes(t *testing.T) {
	engine := mtimelock.Engine()
	if missing := engine.MissingProbes(run(t, 300, campaign.FaultSetting{Swarm: true}).Probes); len(missing) > 0 {
		t.Fatalf("300 swarm runs never fired %v", missing)
	}
}

// leasekit's lease passes the heartbeat lock's workload.
func TestLeasePassesMtimeLockWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(mtimelock.Spec())), simtest.Options{Seeds: 300})
}
