// Command leasesim runs leasekit's simulation campaigns, and replays,
// shrinks and explains the seed files they write: package leasesim over
// leasekit's engines (workload.Catalog). See docs/LEASESIM.md.
package main

import (
	"github.com/leasekit/leasekit/leasesim"
	"github.com/leasekit/leasekit/workload"
)

func main() { leasesim.Main(workload.Catalog()) }
