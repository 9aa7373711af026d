package examplekit_test

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/examples/examplekit"
	"github.com/leasekit/leasekit/examples/pidfile"
	"github.com/leasekit/leasekit/lockwork"
)

// Findings runs the same short campaign twice over one workload: with the
// PID-file lock the harness names its hazard; with leasekit's lease in its
// place (LeaseSpec) it finds nothing.
func Example() {
	broken, err := examplekit.Findings(pidfile.Engine(), 300, "(PID reuse)")
	if err != nil {
		fmt.Println(err)
		return
	}
	sound, err := examplekit.Findings(lockwork.Engine(examplekit.LeaseSpec(pidfile.Spec())), 300, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pidfile:", strings.Join(broken, "; "))
	fmt.Println("lease:", len(sound), "findings")
	// Output:
	// pidfile: violation invariant held by a dead holder (PID reuse)
	// lease: 0 findings
}
