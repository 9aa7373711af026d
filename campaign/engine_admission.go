package campaign

import (
	"errors"
	"io"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// The admission engine: sim.AdmissionWorkload (package admission: the
// helper lifecycle under crashes, power loss, PID reuse, zombies, stale
// handles, legacy records, hostile corruption and mutation-claim swaps),
// its history checked by porcupine against models.AdmissionModel.
func init() {
	Register(&Engine{
		Name:     "admission",
		Doc:      "single-slot export admission with a helper lifecycle (package admission)",
		StepsMax: 100_000,
		Params: []Param{
			{Name: "controllers", Default: 3, Min: 1, Max: 6, Doc: "controller processes"},
			{Name: "ops_per_proc", Default: 10, Min: 1, Max: 64, Doc: "loop steps per controller"},
			{Name: "respawns", Default: 4, Min: 0, Max: 32, Doc: "crashed controllers restarted per run"},
			{Name: "legacy", Default: 0, Min: 0, Max: 3, Fixed: true,
				Doc: "legacy record at setup: 0 drawn per run, 1 none, 2 schema 1, 3 schema 2"},
		},
		Setup: func(p Params) func(w *sim.World) error {
			return sim.AdmissionWorkload(sim.AdmissionOptions{
				Controllers: p["controllers"], OpsPerProc: p["ops_per_proc"],
				RespawnsMax: noneIsMinusOne(p["respawns"]), Legacy: p["legacy"],
			})
		},
		Check: func(result sim.Result, visualize bool) Verdict {
			return historyVerdict("admission", result, sim.CheckAdmissionHistory(result.History), visualize)
		},
	})
}

// historyVerdict turns a sim.Check*History error into a Verdict whose
// message is reduced to a stable class (operation counts vary while
// shrinking): a timeout is "porcupine timeout" (never a pass).
func historyVerdict(engine string, result sim.Result, err error, visualize bool) Verdict {
	verdict := Verdict{OK: true}
	if err != nil {
		message := err.Error()
		switch {
		case errors.Is(err, sim.ErrCheckTimeout):
			message = "porcupine timeout: " + message
		case strings.Contains(message, "contract"):
			message = "history contract: " + message
		default:
			message = "not linearizable: " + engine + " history"
		}
		verdict = Verdict{Message: message}
	}
	if visualize {
		history := result.History
		verdict.Visualize = func(w io.Writer) error { return sim.VisualizeHistory(engine, history, w) }
	}
	return verdict
}
