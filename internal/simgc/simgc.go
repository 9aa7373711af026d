// Package simgc sets the garbage collector's target for simulation
// programs: leasesim, and the test binaries that run campaigns.
//
// A campaign keeps a few MiB live while it allocates about 0.7 MiB per
// seed, so at the runtime's default GOGC of 100 it collects every few
// seeds. At 400 it collects a quarter as often, for at most about 16 MiB
// more heap per process: the simulation tests spend about a third less CPU
// (campaign's tests 13.0 to 8.8 CPU-s, examples/pidfile's 7.1 to 3.3), and
// the runs themselves are the same, since no simulated step depends on
// when the collector runs.
package simgc

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC Tune sets.
const Percent = 400

// Tune sets GOGC to Percent unless the environment sets GOGC.
func Tune() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
}
