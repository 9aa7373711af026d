package dirleasework

import (
	"errors"
	"fmt"

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

// judgeLoose fails the run when a call (what, by p) that ran wholly while
// one loosening stood succeeded.
func (dw *dirWorld) judgeLoose(p *sim.Proc, what string, watch workkit.LooseWatch, err error) {
	dir, mode, stood := dw.loose.Stood(dw.world, watch)
	switch {
	case !stood:
	case err == nil:
		dw.fail(fmt.Errorf("%s's %s succeeded while %s had mode %v, which every engine call must refuse",
			p.Name(), what, dir, mode), false)
	case errors.Is(err, dirlease.ErrUnsafe):
		dw.world.Probe("dirlease-loose-mode-refused")
		if what == "Inspect" {
			dw.world.Probe("dirlease-inspect-loose-mode-refused")
		}
	}
}
