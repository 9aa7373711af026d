package admissionwork_test

import (
	"fmt"

	"github.com/leasekit/leasekit/workload/admissionwork"
)

// The engine's value carries the small scenario `leasesim explore`
// enumerates: two controllers, two steps each, no respawn, no legacy
// record, a crash point at every step.
func ExampleEngine() {
	spec := admissionwork.Engine().ExploreScenario()
	fmt.Println(spec.Engine, spec.Params, spec.Faults.Get("crash"))
	// Output: admission map[controllers:2 legacy:1 ops_per_proc:2 pid_impostors:0 respawns:0 users:0] 0.01
}
