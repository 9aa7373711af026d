package workkit

import (
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/sim"
)

// Check returns an engine's campaign.Engine.Check: check runs porcupine on
// a run's history, and message reduces its error to the Verdict's stable
// message (CheckMessage, or the engine's own classification).
func Check(e *campaign.Engine, check func([]sim.Operation) error, message func(engine string, err error) string) func(sim.Result, bool) campaign.Verdict {
	return func(result sim.Result, visualize bool) campaign.Verdict {
		return e.HistoryVerdict(result, message(e.Name, check(result.History)), visualize)
	}
}
