package admissionwork

import (
	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Engine is the admission engine's definition for the harness: the
// workload (package admission: the helper lifecycle under crashes, power
// loss, PID reuse, zombies, stale handles, legacy records, hostile
// corruption, mutation-claim swaps, a co-tenant's symlinks and swapped-in
// records of other live owners), its knobs, its history checked by
// porcupine against models.AdmissionModel, and the probes its campaigns
// must fire. Each call returns a fresh value.
func Engine() *campaign.Engine {
	e := &campaign.Engine{
		Name:     "admission",
		Doc:      "single-slot export admission with a helper lifecycle (package admission)",
		StepsMax: 100_000,
		// WorkloadVersion: bump when this workload changes what a run does.
		WorkloadVersion: 6,
		Params: []campaign.Param{
			{Name: "controllers", Default: 3, Min: 1, Max: 6, Doc: "controller processes"},
			{Name: "ops_per_proc", Default: 10, Min: 1, Max: 64, Doc: "loop steps per controller"},
			{Name: "respawns", Default: 4, Min: 0, Max: 32, Doc: "crashed controllers restarted per run"},
			{Name: "legacy", Default: 0, Min: 0, Max: 3, Fixed: true,
				Doc: "legacy record at setup: 0 drawn per run, 1 none, 2 schema 1, 3 schema 2"},
			{Name: "pid_impostors", Default: 1, Min: 0, Max: 1, Fixed: true,
				Doc: "1: in some runs a crashed controller's PID is taken by an impostor with its handle; 0 never"},
			{Name: "record_swaps", Default: 1, Min: 0, Max: 1, Fixed: true,
				Doc: "1: the co-tenant may swap another live owner's earlier slot record in over the current one; 0 never"},
			{Name: "operators", Default: 1, Min: 0, Max: 3,
				Doc: "operator processes that inspect and quarantine the slot beside live traffic, on a stale judgement"},
			{Name: "users", Default: 2, Min: 0, Max: 4, Doc: "command-line users running admission run on a state home of their own"},
		},
		Setup: func(p campaign.Params) func(w *sim.World) error {
			return AdmissionWorkload(AdmissionOptions{
				Controllers: p["controllers"], OpsPerProc: p["ops_per_proc"],
				RespawnsMax: workkit.NoneIsMinusOne(p["respawns"]), Legacy: p["legacy"],
				PIDImpostors: p["pid_impostors"] - 1, RecordSwaps: p["record_swaps"] - 1,
				Operators: workkit.NoneIsMinusOne(p["operators"]), Users: workkit.NoneIsMinusOne(p["users"]),
			})
		},
		History: func(history []sim.Operation) ([]porcupine.Operation, porcupine.Model) {
			return AdmissionOperations(history), models.AdmissionModel()
		},
		Probes: []string{
			"admission-stale-owner-reclaimed",
			"admission-stale-guard-reclaimed",
			"pid-reused",
			"zombie",
			sim.ProbeCrashBetweenRenameAndDirSync,
			"admission-rename-race-refused",
			"admission-legacy-recovered",
			"admission-disposition-active",
			"admission-disposition-indeterminate",
			"admission-disposition-recoverable",
			"admission-aba-refused",
			// the hostile co-tenant (cotenant.go): a symlink at the slot's path
			"cotenant-symlink-planted",
			"admission-symlink-refused",
			"admission-operator-repair-symlink",
			// the co-tenant's loosened mode (loosemode.go)
			"cotenant-loosened-mode",
			"admission-loose-mode-refused",
			"admission-inspect-loose-mode-refused",
			// swapadm: another live owner's earlier record swapped in (swapin.go)
			"cotenant-record-swapped-in",
			"admission-swapped-record-cas-refused",
			"admission-swapped-record-held",
			"admission-operator-record-returned",
			"admission-helper-bound",
			"admission-helper-digest-checked", // the judges name a bound helper by its start digest
			// command-line users running admission run (users.go)
			"admission-user-held",
			"admission-user-running",
			"admission-user-released",
			"admission-user-busy",
			"admission-user-rerun",
			"admission-user-command-checked",
			"admission-cleanup-unsafe",
			"admission-liveness-acquired",
			"admission-done-survives-power-loss", // the durability oracle judged a power loss
			"admission-claim-lost-hostile",       // statecas.ErrClaimLost with a hostile claim swap during the call
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
			// PID-reuse impostors (impostors.go): a crashed controller's PID
			// taken by a process (with its executable, or across a reboot)
			// that acquires over the dead controller's record
			"admission-pid-impostor",
			"admission-pid-impostor-same-exe",
			"admission-pid-impostor-across-boot",
			"admission-pid-impostor-acquire-acquired",
			"admission-pid-impostor-acquire-indeterminate",
			"admission-pid-impostor-release-ok",
			// races over the slot: two reclaimers of one stale record, and
			// a former owner's update or release after a takeover
			"admission-double-stale-reclaim",
			"admission-update-after-takeover",
			"admission-release-after-takeover",
			// the mutation-claim ground truth (claimwatch.go) judged a refusal
			"admission-mutation-busy-live-claimant",
			// a second host on the volume and containers (hosts.go)
			workkit.ProbeSecondHost,
			workkit.ProbeContainerWorld,
			workkit.ProbeContainerPID1,
			workkit.ProbeContainerPIDCollision,
			"admission-remote-holder",
			"admission-foreign-namespace-holder",
			"admission-operator-quarantined-elsewhere",
			"admission-probe-rehost-claim",
			// operators beside live traffic (operators.go): Quarantine on a
			// judgement that may be stale, and the ground truth at its move
			"admission-operator-quarantined",
			"admission-operator-active-refused",
			"admission-operator-stale-refused",
			"admission-operator-moved-claim",
			"admission-operator-moved-live-elsewhere",
			"admission-operator-inspected-live-helper",
			sim.ProbeClockStepForward,
			sim.ProbeClockStepBackward,
			workkit.ProbePowerLossEmpty, // a claim temp left empty by a power loss
			workkit.ProbePowerLossTorn,  // or torn (cut mid-write, zeros after)
			sim.ProbePowerLossInWriteWindow,
			// cancellation (item 6) and the left-nothing oracle (workkit.LeftNothing)
			"admission-acquire-cancelled",
			"admission-acquire-deadline",
			"admission-acquire-cancelled-mid-call",
			"admission-update-cancelled",
			"admission-release-cancelled",
			"admission-cancelled-left-nothing",
			"admission-failed-left-nothing",
			"admission-left-reported",
		},
		Explore: campaign.Params{"controllers": 2, "ops_per_proc": 2, "respawns": 0, "legacy": 1, "pid_impostors": 0, "users": 0},
	}
	e.Probes = append(e.Probes[:len(e.Probes):len(e.Probes)], threadProbes...)      // threads.go
	e.Probes = append(e.Probes[:len(e.Probes):len(e.Probes)], cliOperatorProbes...) // clioperator.go
	e.Check = workkit.Check(e, CheckAdmissionHistory, workkit.CheckMessage)
	return e
}
