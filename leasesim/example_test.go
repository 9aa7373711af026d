package leasesim_test

import (
	"fmt"
	"os"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/leasesim"
)

// A module's own leasesim is leasesim.Main over its catalog; Command.Run is
// the same without exiting. Here the engine is leasekit's self-test lock
// under a user's name.
func ExampleCommand_Run() {
	engine := campaign.SelfTestEngine()
	engine.Name, engine.Hidden = "userlock", false
	command := &leasesim.Command{Catalog: campaign.NewCatalog(engine), Package: "./cmd/mysim"}
	code := command.Run([]string{"replay", "--quiet", "12"}, os.Stdout, os.Stderr)
	fmt.Println("exit", code)
	// Output:
	// outcome=ok steps=28 processes=4 hash=87b965176ac5018b
	// probes: zombie-threads=2 zombie=2
	// replayed twice, traced and untraced: the same run
	// exit 0
}
