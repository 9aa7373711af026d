package leasework

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// strandedGuards holds a process to what lease promises about a lifecycle
// guard one of its calls failed to give back (a fault struck the removal,
// or the read that tells whether it is still the call's): the Manager
// that left it gives it back on its next call. Without that, the live
// process holds the guard, and its own later calls wait for themselves
// until they give up busy, as every other caller does, until it exits.
type strandedGuards struct {
	// by holds the processes whose last failed call left a guard naming
	// them that the left-nothing oracle accepted.
	by map[*sim.Proc]bool
}

// left is the left-nothing oracle's OwnedLeft hook.
func (s *strandedGuards) left(p *sim.Proc, name string) {
	if name != leaseGuardPath {
		return
	}
	if s.by == nil {
		s.by = map[*sim.Proc]bool{}
	}
	s.by[p] = true
}

// judgeStranded judges p's acquire after an earlier call of its Manager
// stranded a guard. A busy refusal naming p's own PID, with no other
// thread of p running during the call, is p waiting for itself.
func (lw *leaseWorld) judgeStranded(p *sim.Proc, call *sim.Call, res lease.AcquireResult, err error) {
	if !lw.stranded.by[p] {
		return
	}
	self := fmt.Sprintf("guard held by live PID %d)", p.Table().PID)
	switch {
	case err != nil || call.SiblingsDuring():
		return // judged at the next call
	case res.Refusal.Reason == lease.RefusalLifecycleBusy && strings.Contains(res.Refusal.Diagnostic, self):
		lw.fail(fmt.Errorf("%s: acquire waited for the lifecycle guard its own Manager stranded in an earlier "+
			"failed call, and gave up: %s", p.Name(), res.Refusal), false)
	default:
		lw.world.Probe("lease-stranded-guard-given-back")
	}
	delete(lw.stranded.by, p)
}

// probeUnpublishedCreate marks an acquire whose guard create failed before
// it published anything (an error naming the guard's temp): the engine must
// leave the guard path alone then (the rule table's unpublished-create row;
// the lease invariant fails a holder whose guard leaves its path).
func (lw *leaseWorld) probeUnpublishedCreate(err error) {
	if err == nil {
		return
	}
	text := err.Error()
	if strings.Contains(text, "creating the lifecycle guard") && strings.Contains(text, "/.tmp-lg") {
		lw.world.Probe("lease-guard-create-failed-unpublished")
	}
}
