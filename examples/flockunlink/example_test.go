package flockunlink_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/flockunlink"
)

// A campaign of the flock-then-unlink lock finds it broken: an unlink
// between another process's open and its flock splits the lock over two
// inodes.
func Example() {
	engine := flockunlink.Engine()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: 3000, BaseSeed: 1, Workers: 1, Faults: campaign.FaultSetting{Swarm: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, failure := range report.FirstFailures() {
		if strings.Contains(failure.Class, "(split inode)") {
			fmt.Println(failure.Outcome, failure.Class)
		}
	}
	// Output: violation invariant two holders (split inode)
}
