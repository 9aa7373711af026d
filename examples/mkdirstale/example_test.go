package mkdirstale_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/mkdirstale"
)

// A campaign of the mkdir-with-staleness lock finds it broken: a holder
// paused past the staleness limit loses its lock while it works.
func Example() {
	engine := mkdirstale.Engine()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: 300, BaseSeed: 1, Workers: 1, Faults: campaign.FaultSetting{Swarm: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, failure := range report.FirstFailures() {
		if strings.Contains(failure.Class, "(paused holder)") {
			fmt.Println(failure.Outcome, failure.Class)
		}
	}
	// Output: violation invariant two holders (paused holder)
}
