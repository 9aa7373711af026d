package leasework

import (
	"strings"

	"github.com/leasekit/leasekit/workload/workkit"
	"path"
)

// leaseResidue classifies a name a lease call created, for the
// workkit.LeftNothing oracle (docs/FORMAT-lease.md's layout): temps,
// prepare and released entries and reclaim intents have unique names and
// must be gone after a failed call; the lifecycle guard must not name the
// caller; receiver.lock is an acquire's product. The namespace's
// directories and quarantine/ evidence may stay.
func leaseResidue(name string) workkit.Residue {
	base := path.Base(name)
	switch {
	case strings.HasPrefix(base, ".tmp-"), strings.HasPrefix(base, ".receiver.prepare-"),
		strings.HasPrefix(base, ".receiver.released-"), strings.HasPrefix(base, ".receiver.lifecycle.released-"):
		return workkit.ResidueMachinery
	case path.Base(path.Dir(name)) == "lifecycle-reclaims" && strings.HasPrefix(base, "reclaim."):
		return workkit.ResidueMachinery
	case base == "receiver.lifecycle.guard.json":
		return workkit.ResidueOwned
	case base == "receiver.lock":
		return workkit.ResidueProduct
	}
	return workkit.ResidueNone
}
