package admissionwork

import (
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The loosened mode (workkit.LooseMode): the co-tenant makes the state
// home group-writable, or a part of the admission directory's path other
// than 0700, and puts it back later. Acquire, Inspect, InspectState and
// Quarantine must all refuse while it stands: judgeLoose fails a run where
// one that ran wholly under one loosening succeeded.

// judgeLoose judges p's call what, started with watch, that ended with err.
func (aw *admissionWorld) judgeLoose(p *sim.Proc, what string, watch workkit.LooseWatch, err error) {
	if failure := aw.loose.Judge(aw.world, p, what, what == "InspectState", watch, err); failure != nil {
		aw.fail(failure, false)
	}
}
