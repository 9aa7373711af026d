package leasework

import (
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Engine is the lease engine's definition for the harness: the workload
// (package lease under hosts, crashes, power loss, PID reuse, hostile
// corruption and rename races), its knobs, its history checked by
// porcupine against models.LeaseModel, and the probes its campaigns must
// fire. Each call returns a fresh value.
func Engine() *campaign.Engine {
	e := &campaign.Engine{
		Name:     "lease",
		Doc:      "generation-fenced single-owner lease (package lease)",
		StepsMax: 100_000,
		// WorkloadVersion: bump when this workload changes what a run does.
		WorkloadVersion: 7,
		Params: []campaign.Param{
			{Name: "hosts", Default: 2, Min: 1, Max: 4, Doc: "hosts"},
			{Name: "procs_per_host", Default: 2, Min: 1, Max: 4, Doc: "worker processes per host"},
			{Name: "ops_per_proc", Default: 8, Min: 1, Max: 64, Doc: "operations per worker"},
			{Name: "impostors", Default: 1, Min: 0, Max: 3, Doc: "impostor processes presenting learned generations"},
			{Name: "respawns", Default: 8, Min: 0, Max: 32, Doc: "crashed workers restarted per run"},
			{Name: "layout", Default: int(LeaseLayoutDrawn), Min: 0, Max: int(LeaseLayoutPerHost), Fixed: true,
				Doc: "0 drawn per run, 1 one shared volume, 2 a volume per host"},
			{Name: "roots", Default: 0, Min: 0, Max: 3, Fixed: true,
				Doc: "RootIDs sharing each namespace: 0 drawn per run (1 to 3)"},
			{Name: "pid_impostors", Default: 1, Min: 0, Max: 1, Fixed: true,
				Doc: "1: in some runs a crashed worker's PID is taken by an impostor presenting its lease; 0 never"},
			{Name: "hostile_callers", Default: 1, Min: 0, Max: 2, Doc: "processes calling the engine with arguments it must refuse"},
			{Name: "guard_operators", Default: 1, Min: 0, Max: 2, Doc: "operators forcing remote lifecycle guards whose holder died (shared volume)"},
			{Name: "epoch_operators", Default: 1, Min: 0, Max: 1, Doc: "operators forcing a torn epoch counter with an epoch floor"},
			{Name: "cli_terminals", Default: 2, Min: 0, Max: 3,
				Doc: "terminals running simulated `leasereal run` invocations with command trees (0 none)"},
			{Name: "cli_operator", Default: 1, Min: 0, Max: 1, Fixed: true,
				Doc: "1: in one run in 3 with terminals, an operator types reclaim and reclaim --force beside them; 0 never"},
		},
		Setup: func(p campaign.Params) func(w *sim.World) error {
			return LeaseWorkload(LeaseOptions{
				Hosts: p["hosts"], ProcsPerHost: p["procs_per_host"], OpsPerProc: p["ops_per_proc"],
				Impostors: workkit.NoneIsMinusOne(p["impostors"]), RespawnsMax: workkit.NoneIsMinusOne(p["respawns"]),
				Layout: LeaseLayout(p["layout"]), Roots: p["roots"], PIDImpostors: p["pid_impostors"] - 1,
				HostileCallers: workkit.NoneIsMinusOne(p["hostile_callers"]),
				GuardOperators: workkit.NoneIsMinusOne(p["guard_operators"]),
				EpochOperators: workkit.NoneIsMinusOne(p["epoch_operators"]),
				CLITerminals:   workkit.NoneIsMinusOne(p["cli_terminals"]),
				CLIOperator:    p["cli_operator"] - 1,
			})
		},
		History: func(history []sim.Operation) ([]porcupine.Operation, porcupine.Model) {
			return LeaseOperations(history), models.LeaseModel()
		},
		Probes: declaredProbes,
		Explore: campaign.Params{"hosts": 1, "procs_per_host": 2, "ops_per_proc": 2, "impostors": 0, "respawns": 0,
			"layout": int(LeaseLayoutShared), "roots": 1, "pid_impostors": 0, "hostile_callers": 0, "guard_operators": 0, "epoch_operators": 0, "cli_terminals": 0},
	}
	e.Probes = append(e.Probes[:len(e.Probes):len(e.Probes)], threadProbes...) // threads.go
	e.Probes = append(e.Probes, cliProbes...)                                  // clirun.go
	e.Probes = append(e.Probes, cliOperatorProbes...)                          // clioperator.go
	e.Check = workkit.Check(e, CheckLeaseHistory, checkMessage)
	return e
}

// declaredProbes must each fire in a campaign with every fault enabled.
var declaredProbes = []string{
	"lease-reclaimed",                     // stale owner reclaimed
	"lease-stale-guard-reclaimed",         // stale guard reclaimed
	"pid-reused",                          // PID reused
	"zombie",                              // zombie seen
	"lease-refused-remote-owner",          // remote refusal
	sim.ProbeCrashBetweenRenameAndDirSync, // crash between rename and dir fsync
	"lease-rename-race-refused",           // rename race refused
	"lease-reclaim-observed",              // LeaseReclaim event in the history
	"lease-probe-acquired",                // liveness probe
	"lease-acquired",                      // disposition: acquired
	"lease-held",                          // disposition: held by a live owner
	"lease-refused-unverifiable-owner",    // disposition: unverifiable
	"lease-refused-corrupt-owner",         // disposition: corrupt
	// a boot-time twin (owner's PID, start tick, executable) after a reboot
	"lease-bystander-on-owner-pid-and-tick-after-reboot",
	// the oracles of a hostile world: a GuardLostError the world caused (a hostile
	// guard fault during the call; without one it is a violation), and a
	// guard garbled at a reclaim whose garbage the engine keeps in quarantine
	"lease-guard-lost-hostile",
	"lease-hostile-garble-at-guard-reclaim",
	"lease-reclaim-quarantined-garbled-guard",
	// simproc's rendered /proc, read by the real parser (internal/procfs)
	"proc-comm-with-paren",
	"proc-zombie-single-thread",
	"proc-zombie-multithread",
	"proc-exe-deleted",
	"proc-eacces",
	"proc-vanished-between-reads",
	"proc-esrch",
	// the stop fault (paused.go): a holder stopped (SIGSTOP, state T) and
	// read as live, refused to an acquirer and to an operator on its host;
	// an operator's move from another host, after which the resumed
	// holder is fenced
	"stop",
	"proc-stopped-live",
	"lease-paused-holder",
	"lease-paused-in-fence",
	"lease-held-by-paused-holder",
	"lease-operator-refused-paused-holder",
	"lease-operator-reclaimed-paused-holder",
	"lease-paused-holder-resumed-owner",
	"lease-paused-holder-resumed-fenced",
	// several roots in one namespace (roots.go): a generation presented
	// through a Manager of another root is refused and fenced
	"lease-roots-shared-namespace",
	"lease-foreign-root-release-not-owner",
	"lease-foreign-root-fence-fenced",
	// PID-reuse impostors (pidimpostor.go): a crashed worker's PID taken
	// by a process (with its executable, or across a reboot) presenting
	// its lease at every fenced call
	"lease-pid-impostor",
	"lease-pid-impostor-same-exe",
	"lease-pid-impostor-across-boot",
	"lease-pid-impostor-fence-fenced",
	"lease-pid-impostor-release-released",
	// races over one record: two reclaimers of one stale record (one
	// loses), and a release by a former owner after a takeover
	"lease-double-stale-reclaim",
	"lease-release-after-takeover",
	// epoch operators (epochops.go): a torn epoch counter or issued mark
	// forced with the floor an operator sees, or 1; a floor below what the
	// engine's evidence proves is refused and forced again with that epoch
	"lease-epoch-operator-tore-counter",
	"lease-epoch-operator-tore-mark",
	"lease-epoch-operator-floor-refused",
	"lease-epoch-operator-forced",
	// the co-tenant (cotenant.go): a record hard-linked outside the tree
	"cotenant",
	"cotenant-hardlink",
	// (symlinks.go) a symlink planted at each entry the engine
	// opens, renames or removes (to the moved original or dangling), the
	// typed refusals it meets, and the operator's repairs
	"lease-cotenant-symlink-owner",
	"lease-cotenant-symlink-receiver",
	"lease-cotenant-symlink-guard",
	"lease-cotenant-symlink-intent",
	"lease-cotenant-symlink-epoch",
	"lease-cotenant-symlink-namespace",
	"lease-cotenant-symlink-quarantine",
	"lease-cotenant-symlink-reclaims",
	"lease-cotenant-symlink-copy",
	"lease-cotenant-symlink-dangling",
	"lease-symlink-refused",
	"lease-refused-corrupt-epoch",
	"lease-operator-repair-symlink-owner",
	"lease-operator-repair-symlink-epoch",
	"lease-operator-repair-symlink-namespace",
	// containers (PID namespaces of one host, workkit/containers.go)
	// and the clock step's two directions
	workkit.ProbeContainerWorld,
	workkit.ProbeContainerPID1,
	workkit.ProbeContainerPIDCollision,
	"lease-refused-foreign-namespace",
	"lease-probe-renamespace",
	sim.ProbeClockStepForward,
	sim.ProbeClockStepBackward,
	// a crashed writer's temp left empty or torn by a power loss, then
	// cleaned; power losses aimed at a new file's write window
	workkit.ProbePowerLossEmpty,
	workkit.ProbePowerLossTorn,
	workkit.ProbePowerLossCleaned,
	sim.ProbePowerLossInWriteWindow,
	// cancellation (item 6, cancel.go): contexts cancelled or past their
	// deadline before or during a call; the left-nothing oracle judged a
	// cancelled and a failed call, excused a leftover whose cleanup a fault
	// struck, and accepted one the error reported
	"call-cancelled",
	"call-deadline",
	"lease-acquire-cancelled",
	"lease-acquire-deadline",
	"lease-acquire-cancelled-mid-call",
	"lease-release-cancelled",
	"lease-release-cancelled-mid-call",
	"lease-with-current-cancelled",
	"lease-with-current-cancelled-mid-call",
	"lease-inspect-cancelled",
	"lease-cancelled-left-nothing",
	"lease-failed-left-nothing",
	"lease-left-excused-by-fault",
	"lease-left-reported",
	// hostile callers (hostile.go): every call with an argument the engine
	// must refuse gets its typed refusal before any write
	"lease-hostile-request-refused",
	"lease-hostile-duration-refused",
	"lease-hostile-config-refused",
	"lease-hostile-cancelled-refused",
	// guard operators (guardops.go): an operator forces a remote guard
	// whose holder died, stalled between its judgement and the move
	"lease-guard-operator-judged-dead-holder",
	"lease-guard-operator-stalled",
	"lease-guard-operator-moved",
	// slow inspects (slowinspect.go): a stall between Inspect's looks, and
	// a second look that finds a new directory on the old inode number
	"lease-inspect-stalled",
	"lease-inspect-reused-inode",
	// a co-tenant garbles the record an operator judged before its force (paused.go)
	"lease-operator-judged-record-garbled",
	// stranded guards (stranded.go): the Manager whose failed call left
	// its guard gives it back on its next call
	"lease-stranded-guard-given-back",
	// a guard create that failed before publishing leaves the path alone
	"lease-guard-create-failed-unpublished",
	// the operator's repair waits for a garbled guard a release moved and
	// may put back
	"lease-repair-waits-guard-in-transit",
}

// checkMessage reduces a CheckLeaseHistory error to a Verdict message
// whose class is stable (operation counts vary while shrinking); "" for
// nil. Unlike workkit.CheckMessage it keeps the check's whole message.
func checkMessage(_ string, err error) string {
	if err == nil {
		return ""
	}
	message := err.Error()
	switch {
	case strings.Contains(message, "timed out"):
		return campaign.CheckTimeoutMessage + ": " + message
	case strings.Contains(message, "contract"):
		return "history contract: " + message
	}
	return "not linearizable: " + message
}
