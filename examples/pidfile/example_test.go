package pidfile_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/examples/pidfile"
)

// A campaign of the PID-file lock's engine finds it broken: a crashed
// holder's PID, reused by another process, keeps its stale lock "held".
func Example() {
	engine := pidfile.Engine()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog: campaign.NewCatalog(engine), Engines: []string{engine.Name},
		Seeds: 300, BaseSeed: 1, Workers: 1, Faults: campaign.FaultSetting{Swarm: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, failure := range report.FirstFailures() {
		if strings.Contains(failure.Class, "(PID reuse)") {
			fmt.Println(failure.Outcome, failure.Class)
		}
	}
	// Output: violation invariant held by a dead holder (PID reuse)
}
