package nightlylockfile_test

import (
	"testing"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/nightlylockfile"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the mechanism of the library's issue 39: kill(pid, 0)
// succeeds for any process with the PID, here an unreaped zombie of the
// crashed holder, so its lock stays "held" with no holder.
func TestLockfileKeepsADeadHoldersLockHeld(t *testing.T) {
	examplekit.RequireFinds(t, nightlylockfile.Engine(), simtest.Options{Seeds: 300}, "(zombie)")
}

// The harness finds two holders: two processes judge one dead holder's file
// stale, and the second removes the fresh file the first just linked.
func TestLockfileLetsTwoHoldersInAfterADeadHolder(t *testing.T) {
	examplekit.RequireFinds(t, nightlylockfile.Engine(), simtest.Options{Seeds: 500}, "two holders")
}

// leasekit's lease passes the library's workload.
func TestLeasePassesTheLockfileWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(nightlylockfile.Spec())), simtest.Options{Seeds: 300})
}
