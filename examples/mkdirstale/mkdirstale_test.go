package mkdirstale_test

import (
	"testing"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/mkdirstale"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the mkdir lock broken by a paused holder: its lock
// grows stale while it runs.
func TestMkdirStaleIsBrokenByAPausedHolder(t *testing.T) {
	examplekit.RequireFinds(t, mkdirstale.Engine(), simtest.Options{Seeds: 300}, "(paused holder)")
}

// The harness finds the mkdir lock broken by a wall-clock step.
func TestMkdirStaleIsBrokenByAClockStep(t *testing.T) {
	examplekit.RequireFinds(t, mkdirstale.Engine(), simtest.Options{Seeds: 300, Faults: "clockstep=0.01"}, "(clock step)")
}

// leasekit's lease passes the mkdir lock's workload.
func TestLeasePassesMkdirStaleWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(mkdirstale.Spec())), simtest.Options{Seeds: 300})
}
