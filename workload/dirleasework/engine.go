package dirleasework

import (
	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Engine is the dirlease engine's definition for the harness: the workload
// (package dirlease: creators, concurrent recoverers, children, bundle
// publication, hostile directory swaps, crashes, power loss, PID reuse),
// its knobs, its history checked by porcupine against
// models.DirLeaseModel, and the probes its campaigns must fire. Each call
// returns a fresh value.
func Engine() *campaign.Engine {
	e := &campaign.Engine{
		Name:     "dirlease",
		Doc:      "leases on private working directories with recovery (package dirlease)",
		StepsMax: 100_000,
		// WorkloadVersion: bump when this workload changes what a run does.
		WorkloadVersion: 1,
		Params: []campaign.Param{
			{Name: "creators", Default: 3, Min: 1, Max: 6, Doc: "creator processes"},
			{Name: "recoverers", Default: 2, Min: 1, Max: 4, Doc: "recovery processes racing the creators"},
			{Name: "ops_per_proc", Default: 6, Min: 1, Max: 64, Doc: "loop steps per process"},
			{Name: "respawns", Default: 4, Min: 0, Max: 32, Doc: "crashed processes restarted per run"},
		},
		Setup: func(p campaign.Params) func(w *sim.World) error {
			return DirleaseWorkload(DirleaseOptions{
				Creators: p["creators"], Recoverers: p["recoverers"], OpsPerProc: p["ops_per_proc"],
				RespawnsMax: workkit.NoneIsMinusOne(p["respawns"]),
			})
		},
		History: func(history []sim.Operation) ([]porcupine.Operation, porcupine.Model) {
			return DirleaseOperations(history), models.DirLeaseModel()
		},
		Probes: []string{
			"dirlease-stale-owner-recovered",
			"dirlease-stale-guard-reclaimed",
			"pid-reused",
			"zombie",
			sim.ProbeCrashBetweenRenameAndDirSync,
			"dirlease-rename-race-refused",
			"dirlease-disposition-active",
			"dirlease-disposition-indeterminate",
			"dirlease-disposition-recoverable",
			"dirlease-published",
			"dirlease-swap",
			"dirlease-recover-raced-create",
			"dirlease-liveness-recovered",
			"dirlease-done-survives-power-loss", // the durability oracle judged a power loss
			// simproc's rendered /proc, read by the real parser (internal/procfs)
			"proc-comm-with-paren",
			"proc-zombie-single-thread",
			"proc-zombie-multithread",
			"proc-exe-deleted",
			"proc-eacces",
			"proc-vanished-between-reads",
			"proc-esrch",
			// the stop fault: a process stopped (SIGSTOP) and inspected as live in state T
			"stop",
			"proc-stopped-live",
			// cancellation (item 6) and the left-nothing oracle (workkit.LeftNothing)
			"dirlease-create-cancelled",
			"dirlease-create-deadline",
			"dirlease-update-cancelled",
			"dirlease-release-cancelled",
			"dirlease-recover-cancelled",
			"dirlease-recover-cancelled-mid-call",
			"dirlease-cancelled-left-nothing",
			"dirlease-failed-left-nothing",
			"dirlease-left-reported",
		},
		Explore: campaign.Params{"creators": 1, "recoverers": 1, "ops_per_proc": 2, "respawns": 0},
	}
	e.Check = workkit.Check(e, CheckDirleaseHistory, workkit.CheckMessage)
	return e
}
