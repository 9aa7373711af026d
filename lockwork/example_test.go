package lockwork_test

import (
	"fmt"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/lockwork"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Example runs leasekit's lease, as a lockwork Lock, through one seed of the
// mutual-exclusion workload: the engine is a plain value, and a catalog of
// one engine runs it.
func Example() {
	engine := lockwork.Engine(lockwork.Spec{Name: "lease", Rules: models.LockRules{DeadHolderFree: true},
		Open: func(p *sim.Proc) lockwork.Lock { return lockwork.LeaseLock(p, lockwork.DirDefault) }})
	catalog := campaign.NewCatalog(engine)
	spec, err := campaign.Options{Catalog: catalog}.SpecFor("lease", 7)
	if err != nil {
		panic(err)
	}
	result, finding, _, err := catalog.Execute(spec, nil, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(finding, result.Probes[lockwork.ProbeAcquired] > 0, result.Probes[lockwork.ProbeReleased] > 0)
	// Output: ok true true
}
