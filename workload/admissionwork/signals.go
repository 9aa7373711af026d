package admissionwork

import (
	"errors"

	"github.com/leasekit/leasekit/internal/statecas"
)

// statecas.ErrClaimLost is the admission engine's "cannot happen" signal
// for a cooperating world: the mutation claim a call held was displaced
// while it worked. In this workload the world displaces it legitimately in
// one way, the hostile co-tenant's swap of the claim for a copy
// (FaultRenameRace, counted in aw.swaps); the protocol itself can in one
// known case (docs/THREAT-MODEL.md, gap 1: an orphan recovery that cannot
// restore a live claim, or a holder whose verify falls in the window
// where a recoverer has moved its live claim aside before putting it back:
// POSIX has no rename-if-unchanged). noteClaimLost counts both kinds. It
// cannot be a finding until the workload can tell that known race from a
// new bug: in 20,000 seeds (2026-12-01) 2,262 were hostile and 22 had no
// hostile swap. The first two read (seeds 416 and 1972) are the two gap-1
// cases: "a live mutation claim was displaced during orphan recovery", and
// a holder's "the mutation claim of this call was displaced" after another
// controller, recovering what it had judged an orphan, renamed the live
// claim aside (trace of seed 1972, steps 1020-1049).
func (aw *admissionWorld) noteClaimLost(err error, swapsAtCall int) {
	var e *statecas.Error
	if !errors.As(err, &e) || e.Kind != statecas.ErrClaimLost {
		return
	}
	if aw.swaps != swapsAtCall {
		aw.world.Probe("admission-claim-lost-hostile")
		return
	}
	aw.world.Probe("admission-claim-lost-unexplained")
}
