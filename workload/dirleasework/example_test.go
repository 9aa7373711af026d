package dirleasework_test

import (
	"fmt"

	"github.com/leasekit/leasekit/workload/dirleasework"
)

// The engine's knobs, with the defaults a campaign runs and the minimums
// shrinking lowers them towards.
func ExampleEngine() {
	for _, p := range dirleasework.Engine().Params {
		fmt.Printf("%s=%d (min %d): %s\n", p.Name, p.Default, p.Min, p.Doc)
	}
	// Output:
	// creators=3 (min 1): creator processes
	// recoverers=2 (min 1): recovery processes racing the creators
	// ops_per_proc=6 (min 1): loop steps per process
	// respawns=4 (min 0): crashed processes restarted per run
	// pid_impostors=1 (min 0): 1: in some runs a crashed creator's PID is taken by an impostor; 0 never
	// claim_swaps=1 (min 0): 1: the co-tenant may rename a copy of one live claim's file over another's; 0 never
	// operators=1 (min 0): operator processes running Inspect and Quarantine beside the traffic
	// users=2 (min 0): command-line users running dirlease run on shared paths, with a recovery of their own
	// crash_pileup=1 (min 0): 1: in one run in 16, killed creators pile up claims past dirlease.ClaimsMax before the liveness phase; 2 in every run; 0 never
}
