package simworld_test

import (
	"fmt"

	"github.com/leasekit/leasekit/realstress"
	"github.com/leasekit/leasekit/realstress/simworld"
)

// A differential scenario runs here against simfs and a simproc host, and
// beside it with real processes (realstress.RealWorld); both must print the
// same lines. A holds the lease, so B finds it held; A dies as an unreaped
// zombie, which the identity rules call dead, so B reclaims it; an upgrade
// of the executable under the running owner B does not make B stale, so A's
// new incarnation finds the lease held rather than reclaiming it.
func ExampleWorld() {
	steps, err := realstress.ParseScenario(`
		acquire A
		acquire B     # A holds it
		zombie A      # SIGKILL, not reaped: a one-thread zombie
		acquire B     # reclaims the zombie's lease
		upgrade B     # a new executable inode under the running owner
		acquire A     # A#2, a new incarnation: B#1 still owns it
		release B
		inspect A
	`)
	if err != nil {
		panic(err)
	}
	world := simworld.New()
	defer world.Close()
	lines, err := realstress.RunScenario(steps, world)
	if err != nil {
		panic(err)
	}
	for _, line := range lines {
		fmt.Println(line)
	}
	// Output:
	// acquire A: acquired epoch=1 reclaimed=0
	// acquire B: held by A#1 epoch=1
	// zombie A: zombie, not reaped
	// acquire B: acquired epoch=2 reclaimed=1 (PID is a single-threaded zombie)
	// upgrade B: executable replaced
	// acquire A: held by B#1 epoch=2
	// release B: released
	// inspect A: empty
}
