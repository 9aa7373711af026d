package leasework

// Torn and empty leftovers of a power loss (workkit.LeftoverWatch): on a
// space whose volume only one host mounts, a power loss reduces the volume
// to a crash state, which may keep a crashed writer's temp (a guard, intent
// or epoch temp, or owner.json inside a .receiver.prepare-* directory) with
// its name but not its data. The engine's cleanup meets it (cleanup.go:
// removed once its writer is provably dead, or left alone); the liveness
// probe says the namespace still works with it there.

import (
	"github.com/leasekit/leasekit/workload/workkit"
)

// leftoverWatch is a space's watch, made on first use.
func (s *leaseSpace) leftoverWatch() *workkit.LeftoverWatch {
	if s.leftovers == nil {
		s.leftovers = &workkit.LeftoverWatch{Dirs: []string{leaseNamespace}, Skip: []string{"quarantine"},
			Hostile: s.hostileWrote}
	}
	return s.leftovers
}

// checkLeftovers is the invariant's part: after a power loss of a space's
// only host it scans the space; every step it notes what is gone.
func (lw *leaseWorld) checkLeftovers() {
	w := lw.world
	for _, space := range lw.spaces {
		if len(space.hosts) != 1 {
			continue // a shared volume survives a host's power loss
		}
		boot := space.hosts[0].Table().BootID()
		if space.boot == "" {
			space.boot = boot
		}
		if boot != space.boot {
			space.boot = boot
			space.leftoverWatch().AfterPowerLoss(w, space.volume.Root())
		}
		if space.leftovers != nil {
			space.leftovers.Check(w, space.volume.Root())
		}
	}
}
