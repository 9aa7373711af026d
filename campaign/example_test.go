package campaign_test

import (
	"context"
	"fmt"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload"
)

// Run is what `leasesim run` does: every seed index runs each named engine's
// workload under a drawn (swarm) fault plan and judges it with the engine's
// checks and porcupine model. Here 20 seeds of each of leasekit's three
// engines, every 5th seed also run twice to compare hash streams. The
// counts are a function of the seeds, whatever the worker count; only
// ElapsedSeconds is wall time.
func ExampleRun() {
	catalog := workload.Catalog()
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog:           catalog,
		Engines:           catalog.Names(false), // admission, dirlease, lease
		Seeds:             20,
		BaseSeed:          1,
		Workers:           2,
		Scheduler:         "mix",
		Faults:            campaign.FaultSetting{Swarm: true},
		DeterminismSample: 5,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("engines:", report.Engines)
	fmt.Println("runs:", report.Runs, "with steps:", report.Steps > 0)
	fmt.Println("outcomes:", report.Outcomes)
	fmt.Println("per engine:", report.PerEngine)
	fmt.Println("run twice:", report.DeterminismChecked)
	fmt.Println("failures:", len(report.Failures), "exit code:", report.ExitCode())
	// Output:
	// engines: [admission dirlease lease]
	// runs: 60 with steps: true
	// outcomes: map[ok:60]
	// per engine: map[admission:map[ok:20] dirlease:map[ok:20] lease:map[ok:20]]
	// run twice: 12
	// failures: 0 exit code: 0
}

// A failing run is reported with its seed and a stable class, and turns the
// exit code non-zero. Here the self-test lock gets a stricter history check
// than its own (some acquire must succeed), one client and a 10% per-step
// crash rate, so a seed whose client dies before it ever gets the lock
// fails. ShrinkFailures would then reduce each failure to a minimal seed
// file that replays it.
func ExampleRun_failures() {
	strict := *campaign.SelfTestEngine()
	strict.Name = "selftest-strict"
	strict.Check = func(result sim.Result, _ bool) campaign.Verdict {
		for _, op := range result.History {
			if op.Op == "acquire" && op.Output == true {
				return campaign.Verdict{OK: true}
			}
		}
		return campaign.Verdict{Message: "no acquire succeeded"}
	}
	faults, err := campaign.ParseFaultSetting("crash=0.1") // only crashes, 10% a step
	if err != nil {
		panic(err)
	}
	report, err := campaign.Run(context.Background(), campaign.Options{
		Catalog:  campaign.NewCatalog(&strict),
		Engines:  []string{"selftest-strict"},
		Seeds:    20,
		BaseSeed: 1,
		Workers:  2,
		Faults:   faults,
		Params:   campaign.Params{"processes": 1, "attempts": 2},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("outcomes:", report.Outcomes)
	for _, failure := range report.Failures {
		fmt.Printf("seed %d: %s, class %q\n", failure.Seed, failure.Outcome, failure.Class)
	}
	fmt.Println("exit code:", report.ExitCode())
	// Output:
	// outcomes: map[ok:16 violation:4]
	// seed 2: violation, class "history: no acquire succeeded"
	// seed 3: violation, class "history: no acquire succeeded"
	// seed 9: violation, class "history: no acquire succeeded"
	// seed 14: violation, class "history: no acquire succeeded"
	// exit code: 1
}
