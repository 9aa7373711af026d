package dirleasework

import (
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// The loosened mode (workkit.LooseMode): the co-tenant makes the state
// home group-writable, or a part of the claim directory's path other than
// 0700, and puts it back later. Create, Recover, Quarantine and Inspect
// must all refuse while it stands: judgeLoose fails a run where one that
// ran wholly under one loosening succeeded.

// newLooseMode is the hazard on the creators' state home.
func (dw *dirWorld) newLooseMode() *workkit.LooseMode {
	return &workkit.LooseMode{Volume: dw.volume, UID: dirleaseUID, Home: dirleaseHome, Parts: dirlease.RootDir}
}

// judgeLoose judges p's call what, started with watch, that ended with err.
func (dw *dirWorld) judgeLoose(p *sim.Proc, what string, watch workkit.LooseWatch, err error) {
	failure, refused := dw.loose.Judge(dw.world, p, what, watch, err, dirlease.ErrUnsafe)
	switch {
	case failure != nil:
		dw.fail(failure, false)
	case refused:
		dw.world.Probe("dirlease-loose-mode-refused")
		if what == "Inspect" {
			dw.world.Probe("dirlease-inspect-loose-mode-refused")
		}
	}
}
