package campaign

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// The lease engine: sim.LeaseWorkload (package lease under hosts, crashes,
// power loss, PID reuse, hostile corruption and rename races), its history
// checked by porcupine against models.LeaseModel.
//
// Registration points for the other engines: add an engine_<name>.go like
// this one that calls Register in init; `--engine all` picks it up.
func init() {
	Register(&Engine{
		Name:     "lease",
		Doc:      "generation-fenced single-owner lease (package lease)",
		StepsMax: 100_000,
		Params: []Param{
			{Name: "hosts", Default: 2, Min: 1, Max: 4, Doc: "hosts"},
			{Name: "procs_per_host", Default: 2, Min: 1, Max: 4, Doc: "worker processes per host"},
			{Name: "ops_per_proc", Default: 8, Min: 1, Max: 64, Doc: "operations per worker"},
			{Name: "impostors", Default: 1, Min: 0, Max: 3, Doc: "impostor processes presenting learned generations"},
			{Name: "respawns", Default: 8, Min: 0, Max: 32, Doc: "crashed workers restarted per run"},
			{Name: "layout", Default: int(sim.LeaseLayoutDrawn), Min: 0, Max: int(sim.LeaseLayoutPerHost), Fixed: true,
				Doc: "0 drawn per run, 1 one shared volume, 2 a volume per host"},
		},
		Setup: func(p Params) func(w *sim.World) error {
			return sim.LeaseWorkload(sim.LeaseOptions{
				Hosts: p["hosts"], ProcsPerHost: p["procs_per_host"], OpsPerProc: p["ops_per_proc"],
				Impostors: noneIsMinusOne(p["impostors"]), RespawnsMax: noneIsMinusOne(p["respawns"]),
				Layout: sim.LeaseLayout(p["layout"]),
			})
		},
		Check: checkLease,
	})
}

// noneIsMinusOne maps a knob's 0 to LeaseOptions' "none" (-1); its own zero
// means "default".
func noneIsMinusOne(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// leaseVisualizeTimeout bounds the verbose porcupine check behind --html.
const leaseVisualizeTimeout = 20 * time.Second

// checkLease runs sim.CheckLeaseHistory; its message is reduced to a stable
// class (operation counts vary while shrinking).
func checkLease(result sim.Result, visualize bool) Verdict {
	verdict := Verdict{OK: true}
	if err := sim.CheckLeaseHistory(result.History); err != nil {
		message := err.Error()
		switch {
		case strings.Contains(message, "timed out"):
			message = "porcupine timeout: " + message
		case strings.Contains(message, "contract"):
			message = "history contract: " + message
		default:
			message = "not linearizable: " + message
		}
		verdict = Verdict{Message: message}
	}
	if visualize {
		ops := sim.LeaseOperations(result.History)
		verdict.Visualize = func(w io.Writer) error {
			_, info := porcupine.CheckOperationsVerbose(models.LeaseModel(), ops, leaseVisualizeTimeout)
			if err := porcupine.Visualize(models.LeaseModel(), info, w); err != nil {
				return fmt.Errorf("lease visualization: %w", err)
			}
			return nil
		}
	}
	return verdict
}
