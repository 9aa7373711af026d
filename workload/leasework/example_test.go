package leasework_test

import (
	"fmt"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/workload/leasework"
)

// Engine's value runs as is: list it in a catalog, take a seed's spec
// (every fault drawn by swarm), and run and judge it.
func ExampleEngine() {
	engine := leasework.Engine()
	catalog := campaign.NewCatalog(engine)
	options := campaign.Options{Catalog: catalog, Faults: campaign.FaultSetting{Swarm: true}}
	spec, err := options.SpecFor("lease", 1)
	if err != nil {
		panic(err)
	}
	result, finding, _, err := catalog.Execute(spec, nil, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(engine.Name, finding, len(result.History) > 0)
	// Output: lease ok true
}
