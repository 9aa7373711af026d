package fcntlpid_test

import (
	"testing"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/fcntlpid"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the PID-writing fcntl lock broken: closing the second
// descriptor dropped the process's record lock.
func TestFcntlPIDIsBrokenByCloseAnyDescriptor(t *testing.T) {
	examplekit.RequireFinds(t, fcntlpid.Engine(), simtest.Options{Seeds: 3000}, "(close any descriptor)")
}

// leasekit's lease passes the fcntl lock's workload.
func TestLeasePassesFcntlPIDWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(fcntlpid.Spec())), simtest.Options{Seeds: 300})
}
