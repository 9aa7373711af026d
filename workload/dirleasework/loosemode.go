package dirleasework

import (
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The loosened mode (workkit.LooseMode): the co-tenant makes the state
// home group-writable, or a part of the claim directory's path other than
// 0700, and puts it back later. Create, Recover, Quarantine and Inspect
// must all refuse while it stands: judgeLoose fails a run where one that
// ran wholly under one loosening succeeded.

// judgeLoose judges p's call what, started with watch, that ended with err.
func (dw *dirWorld) judgeLoose(p *sim.Proc, what string, watch workkit.LooseWatch, err error) {
	if failure := dw.loose.Judge(dw.world, p, what, what == "Inspect", watch, err); failure != nil {
		dw.fail(failure, false)
	}
}
