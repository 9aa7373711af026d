package pidfile_test

import (
	"testing"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/pidfile"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/simtest"
)

// The harness finds the PID-file lock broken by PID reuse: a crashed
// holder's PID, taken by another process, keeps its stale lock "held".
func TestPIDFileIsBrokenByPIDReuse(t *testing.T) {
	examplekit.RequireFinds(t, pidfile.Engine(), simtest.Options{Seeds: 300}, "(PID reuse)")
}

// leasekit's lease passes the PID-file lock's workload.
func TestLeasePassesPIDFileWorkload(t *testing.T) {
	simtest.Run(t, lockwork.Engine(examplekit.LeaseSpec(pidfile.Spec())), simtest.Options{Seeds: 300})
}

// go test -fuzz=FuzzLeaseOnPIDFileWorkload explores the lease on the same
// workload from fuzzer-chosen decision streams; go test runs its seed corpus.
func FuzzLeaseOnPIDFileWorkload(f *testing.F) {
	simtest.Fuzz(f, lockwork.Engine(examplekit.LeaseSpec(pidfile.Spec())))
}
