package flocksound_test

import (
	"context"
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/lockwork"
	"testing"

	"github.com/leasekit/leasekit/examples/flocksound"
	"github.com/leasekit/leasekit/simtest"
)

// The sound flock lock passes: no false alarm from the simulated kernel's
// flock (a crashed holder's lock goes with it; a zombie leader with live
// threads still holds it, as on Linux). 20,000 seeds were measured with
// LEASEKIT_SEEDS=20000; go test runs 1,000.
func TestSoundFlockLockPasses(t *testing.T) {
	simtest.Run(t, flocksound.Engine(), simtest.Options{Seeds: 1000})
}

// On a shared volume whose server restarts, the same lock has two holders,
// and the finding names the restart.
func TestFlockLockLosesItsLockAtAServerRestart(t *testing.T) {
	examplekit.RequireFinds(t, flocksound.SharedEngine(), simtest.Options{Seeds: 300, Workers: 1}, "(server restart)")
}

// leasekit's lease keeps its state in files, which the restart keeps: the
// same workload, server restarts included, finds nothing.
func TestLeasePassesTheRestartingServer(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(flocksound.SharedSpec())), simtest.Options{Seeds: 500})
}

// The restarting server is reached: its campaigns restart the server and
// take held locks away (the declared probes fire).
func TestSharedVolumeProbesFire(t *testing.T) {
	engine := flocksound.SharedEngine()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: 100, BaseSeed: 1, Workers: 1, Faults: campaign.FaultSetting{Swarm: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if missing := engine.MissingProbes(report.Probes); len(missing) > 0 || report.Probes[lockwork.ProbeLockLostAtRestart] == 0 {
		t.Fatalf("declared probes that never fired: %v; probes: %v", missing, report.Probes)
	}
	t.Logf("restarts %d, held locks lost %d in %d runs", report.Probes[lockwork.ProbeServerRestart],
		report.Probes[lockwork.ProbeLockLostAtRestart], report.Runs)
}
