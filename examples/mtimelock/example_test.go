package mtimelock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/mtimelock"
)

// A campaign of the mtime heartbeat lock finds it broken both ways: a
// holder paused past the staleness bound, and a wall-clock step, each let
// a second process take a live holder's lock.
func Example() {
	engine := mtimelock.Engine()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: 300, BaseSeed: 1, Workers: 1, Faults: campaign.FaultSetting{Swarm: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var found []string
	for _, failure := range report.FirstFailures() {
		if strings.Contains(failure.Class, "(paused holder)") || strings.Contains(failure.Class, "(clock step)") {
			found = append(found, fmt.Sprint(failure.Outcome, " ", failure.Class))
		}
	}
	slices.Sort(found)
	fmt.Println(strings.Join(found, "\n"))
	// Output:
	// violation invariant two holders (clock step)
	// violation invariant two holders (paused holder)
}
