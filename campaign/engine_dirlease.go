package campaign

import "github.com/leasekit/leasekit/sim"

// The dirlease engine: sim.DirleaseWorkload (package dirlease: creators,
// concurrent recoverers, children, bundle publication, hostile directory
// swaps, crashes, power loss, PID reuse), its history checked by porcupine
// against models.DirLeaseModel.
func init() {
	Register(&Engine{
		Name:     "dirlease",
		Doc:      "leases on private working directories with recovery (package dirlease)",
		StepsMax: 100_000,
		Params: []Param{
			{Name: "creators", Default: 3, Min: 1, Max: 6, Doc: "creator processes"},
			{Name: "recoverers", Default: 2, Min: 1, Max: 4, Doc: "recovery processes racing the creators"},
			{Name: "ops_per_proc", Default: 6, Min: 1, Max: 64, Doc: "loop steps per process"},
			{Name: "respawns", Default: 4, Min: 0, Max: 32, Doc: "crashed processes restarted per run"},
		},
		Setup: func(p Params) func(w *sim.World) error {
			return sim.DirleaseWorkload(sim.DirleaseOptions{
				Creators: p["creators"], Recoverers: p["recoverers"], OpsPerProc: p["ops_per_proc"],
				RespawnsMax: noneIsMinusOne(p["respawns"]),
			})
		},
		Check: func(result sim.Result, visualize bool) Verdict {
			return historyVerdict("dirlease", result, sim.CheckDirleaseHistory(result.History), visualize)
		},
	})
}
