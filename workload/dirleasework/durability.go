package dirleasework

import (
	"fmt"
	"strings"
)

// isClaimFile reports whether a name in the claim directory is a claim
// (not a statecas mutation claim or temporary, which start with a dot and
// may legitimately differ after a power loss).
func isClaimFile(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".")
}

// judgeDurability is the durability oracle's check at a power loss (the
// first step the host's new boot is seen): the claims as the last call that
// reported done left them (created, updated, released, recovered) are still
// what is on disk (workkit.DoneRecord says when there is nothing to judge).
func (dw *dirWorld) judgeDurability() {
	judged, err := dw.claims.AfterPowerLoss()
	switch {
	case err != nil:
		dw.fail(fmt.Errorf("durability: %w", err), false)
	case judged:
		dw.world.Probe("dirlease-done-survives-power-loss")
	default:
		dw.world.Probe("dirlease-durability-unjudged")
	}
}
