// Package workload lists the engines leasekit's harness runs: each
// engine's workload (its simulated processes, hostile hooks, ground truth
// and history recording) lives in its own package (leasework,
// admissionwork, dirleasework) beside the kit they share (workkit), and
// each package's Engine function returns the engine's definition, a plain
// campaign.Engine value. Catalog is the list cmd/leasesim runs, and Rules
// maps the rules of docs/THREAT-MODEL.md to the probes and mutants that
// show the campaigns check them.
package workload

import (
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/workload/admissionwork"
	"github.com/leasekit/leasekit/workload/dirleasework"
	"github.com/leasekit/leasekit/workload/leasework"
)

// Engines returns leasekit's three engines, fresh values, in name order.
func Engines() []*campaign.Engine {
	return []*campaign.Engine{admissionwork.Engine(), dirleasework.Engine(), leasework.Engine()}
}

// Catalog returns the catalog cmd/leasesim runs: the three engines and the
// self-test engine (campaign.SelfTestEngine, hidden from "all").
func Catalog() *campaign.Catalog {
	return campaign.NewCatalog(append(Engines(), campaign.SelfTestEngine())...)
}
