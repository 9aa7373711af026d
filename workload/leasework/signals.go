package leasework

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// The engine's own "cannot happen" signals are findings, not ordinary
// errors. lease.GuardLostError says the lifecycle guard a call held was
// replaced or removed before the call released it: the protocol never does
// that to a holder that passed its verify step, so only the world may cause
// it. In this workload the world has exactly two ways: the hostile
// co-tenant garbles the guard (FaultCorrupt, kind "guard") or swaps it for
// a copy (FaultRenameRace, kind "guard") while the call holds it. A
// GuardLostError with one of those during the call is expected (probe
// lease-guard-lost-hostile); one without is a violation. (An engine panic
// is a finding already: sim turns a process panic into a Violation.)

// hostileGuardEvents counts the hostile faults that touched a lifecycle
// guard so far; a call compares the count at its start and its return.
func (lw *leaseWorld) hostileGuardEvents() int {
	return lw.world.ProbeCount("lease-hostile-corrupt-guard") + lw.world.ProbeCount("lease-hostile-swap-guard") +
		lw.world.ProbeCount("lease-cotenant-symlink-guard")
}

// judgeEngineSignal reports a GuardLostError in err as a finding unless a
// hostile guard fault struck during the call (guardEventsAtCall is
// hostileGuardEvents at the call's start). It returns whether err carried
// the signal.
func (lw *leaseWorld) judgeEngineSignal(p *sim.Proc, call string, err error, guardEventsAtCall int) bool {
	var lost *lease.GuardLostError
	if !errors.As(err, &lost) {
		return false
	}
	if lw.hostileGuardEvents() != guardEventsAtCall {
		lw.world.Probe("lease-guard-lost-hostile")
		return true
	}
	lw.fail(fmt.Errorf("%s: %s: the engine lost its lifecycle guard with no hostile fault on the guard during "+
		"the call: %v", p.Name(), call, err), false)
	return true
}
