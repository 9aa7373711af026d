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
			lw.reviveHostileDebris(space)
			space.leftoverWatch().AfterPowerLoss(w, space.volume.Root())
		}
		if space.leftovers != nil {
			space.leftovers.Check(w, space.volume.Root())
		}
	}
}

// reviveHostileDebris handles what a power loss brings back of the hook's
// in-place writes. The hook garbles a guard or intent with O_TRUNC and never
// fsyncs the data; once the engine has renamed that file away (the
// corruption is then moot and dropped), a power loss may undo the rename and
// leave the garbled file, emptied or torn, under its old name. No engine
// write makes such a file (every guard and intent is a fsynced temp
// published by a rename), so it is hostile debris: it goes back into the
// ledger for the operator to repair, and the liveness probe waits for that
// repair instead of reporting a refusal nobody could cure (a false alarm
// found by a guided campaign: the probe refused a corrupt, empty guard).
func (lw *leaseWorld) reviveHostileDebris(space *leaseSpace) {
	root := space.volume.Root()
	for _, path := range space.hostileInPlace {
		data, err := workkit.ReadRoot(root, path)
		if _, ok := lw.parseRecord(data); err != nil || ok || space.corruptedAt(path) {
			continue
		}
		kind := "guard"
		if path != leaseGuardPath {
			kind = "intent"
		}
		space.corruptions = append(space.corruptions, leaseCorruption{kind: kind, path: path, written: data,
			repairAt: lw.world.Step() + 1})
		lw.world.Probe("lease-powerloss-revived-hostile-" + kind)
	}
	space.hostileInPlace = space.hostileInPlace[:0]
}

// corruptedAt reports whether a corruption in the ledger is at path.
func (s *leaseSpace) corruptedAt(path string) bool {
	for i := range s.corruptions {
		if s.corruptions[i].path == path {
			return true
		}
	}
	return false
}
