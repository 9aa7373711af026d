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
		WorkloadVersion: 8,
		Params: []campaign.Param{
			{Name: "creators", Default: 3, Min: 1, Max: 6, Doc: "creator processes"},
			{Name: "recoverers", Default: 2, Min: 1, Max: 4, Doc: "recovery processes racing the creators"},
			{Name: "ops_per_proc", Default: 6, Min: 1, Max: 64, Doc: "loop steps per process"},
			{Name: "respawns", Default: 4, Min: 0, Max: 32, Doc: "crashed processes restarted per run"},
			{Name: "pid_impostors", Default: 1, Min: 0, Max: 1, Fixed: true,
				Doc: "1: in some runs a crashed creator's PID is taken by an impostor; 0 never"},
			{Name: "claim_swaps", Default: 1, Min: 0, Max: 1, Fixed: true,
				Doc: "1: the co-tenant may rename a copy of one live claim's file over another's; 0 never"},
			{Name: "operators", Default: 1, Min: 0, Max: 2, Doc: "operator processes running Inspect and Quarantine beside the traffic"},
			{Name: "users", Default: 2, Min: 0, Max: 4, Doc: "command-line users running dirlease run on shared paths, with a recovery of their own"},
			{Name: "crash_pileup", Default: 1, Min: 0, Max: 2, Fixed: true,
				Doc: "1: in one run in 16, killed creators pile up claims past dirlease.ClaimsMax before the liveness phase; 2 in every run; 0 never"},
		},
		Setup: func(p campaign.Params) func(w *sim.World) error {
			return DirleaseWorkload(DirleaseOptions{
				Creators: p["creators"], Recoverers: p["recoverers"], OpsPerProc: p["ops_per_proc"],
				RespawnsMax: workkit.NoneIsMinusOne(p["respawns"]), PIDImpostors: p["pid_impostors"] - 1,
				ClaimSwaps: p["claim_swaps"] - 1, Operators: workkit.NoneIsMinusOne(p["operators"]),
				Users: workkit.NoneIsMinusOne(p["users"]), Pileup: p["crash_pileup"] - 1,
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
			// PID-reuse impostors (races.go): a crashed creator's PID taken
			// by a live process while recoverers judge its claim
			"dirlease-pid-impostor",
			"dirlease-pid-impostor-same-exe",
			"dirlease-pid-impostor-across-boot",
			"dirlease-pid-impostor-owner-recovered",
			// two recoveries set out against one stale claim; one loses
			"dirlease-double-stale-reclaim",
			// the hostile co-tenant (cotenant.go, parents.go)
			"cotenant",
			"dirlease-several-parents",
			"cotenant-parent-swapped",
			"cotenant-symlink-parent",
			"dirlease-parent-changed-refused",
			"dirlease-symlink-refused",
			"dirlease-operator-parent-repair",
			"cotenant-dir-recreated",
			"dir-inode-reused",
			"cotenant-trap-armed",
			"cotenant-raced-recovery-check",
			"cotenant-symlink-at-path",
			"cotenant-symlink-planted",
			"cotenant-hardlink",
			"cotenant-loosened-mode",
			"dirlease-loose-mode-refused",
			"dirlease-inspect-loose-mode-refused",
			"cotenant-aba-restored",
			// another live claim swapped in (swapin.go)
			"cotenant-claim-swapped-in",
			"dirlease-swapped-claim-cas-refused",
			"dirlease-swapped-claim-recovery-refused",
			"dirlease-operator-claim-returned",
			"dirlease-aba-refused",
			// a symlink at a claim file's path (symlinkclaim.go)
			"dirlease-cotenant-symlink-claim",
			"dirlease-cotenant-symlink-claim-dangling",
			"dirlease-cotenant-symlink-claim-raced",
			"dirlease-claim-symlink-refused",
			"dirlease-claim-symlink-listed-refused",
			"dirlease-claim-symlink-cas-refused",
			"dirlease-operator-claim-symlink-repaired",
			// a second host on the volume and containers (hosts.go)
			workkit.ProbeSecondHost,
			workkit.ProbeContainerWorld,
			workkit.ProbeContainerPID1,
			workkit.ProbeContainerPIDCollision,
			"dirlease-remote-holder",
			"dirlease-foreign-namespace-holder",
			"dirlease-liveness-hands-over",
			sim.ProbeClockStepForward,
			sim.ProbeClockStepBackward,
			// a claim or data temp left empty or torn by a power loss, then
			// cleaned; power losses aimed at a new file's write window
			workkit.ProbePowerLossEmpty,
			workkit.ProbePowerLossTorn,
			workkit.ProbePowerLossCleaned,
			sim.ProbePowerLossInWriteWindow,
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
			// operators at any moment (operators.go): Inspect and Quarantine
			// beside the traffic, on a judgement that may be stale
			"dirlease-operator-inspected",
			"dirlease-operator-quarantined",
			"dirlease-operator-moved-claim",
			"dirlease-operator-moved-launching",
			"dirlease-operator-stale-refused",
			"dirlease-operator-active-refused",
			"dirlease-operator-window-refused",
			// command-line users on shared paths (users.go)
			"dirlease-user-held",
			"dirlease-user-running",
			"dirlease-user-command-checked",
			"dirlease-liveness-users-recovered",
			"dirlease-user-released",
			"dirlease-user-rerun",
			"dirlease-user-recovered",
			"dirlease-user-busy",
			"dirlease-user-waited",
			"dirlease-user-legacy-held",
			// long-lived state (pileup.go): crashed claims piled up past
			// the bound, then recovered
			"dirlease-pileup",
			"dirlease-pileup-killed",
			"dirlease-pileup-create-refused",
			"dirlease-pileup-over-bound", // Creates racing for the last room
			"dirlease-pileup-recovered",
		},
		Explore: campaign.Params{"creators": 1, "recoverers": 1, "ops_per_proc": 2, "respawns": 0, "pid_impostors": 0, "users": 0},
	}
	e.Probes = append(e.Probes[:len(e.Probes):len(e.Probes)], threadProbes...)      // threads.go
	e.Probes = append(e.Probes[:len(e.Probes):len(e.Probes)], cliOperatorProbes...) // clioperator.go
	e.Check = workkit.Check(e, CheckDirleaseHistory, workkit.CheckMessage)
	return e
}
