package leasework

// Torn and empty leftovers of a power loss (workkit.LeftoverWatch): on a
// space whose volume only one host mounts, a power loss reduces the volume
// to a crash state, which may keep a crashed writer's temp (a guard, intent
// or epoch temp, or owner.json inside a .receiver.prepare-* directory) with
// its name but not its data. The engine's cleanup meets it (lease/cleanup.go:
// removed once its writer is provably dead, or left alone); the liveness
// probe says the namespace still works with it there.

import (
	"github.com/leasekit/leasekit/sim"
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
// only host it scans the space; every step it notes what is gone. It
// tells a reboot by the host's boot count, which moves exactly when the
// boot id changes (every boot gets a fresh id), without comparing ids.
func (lw *leaseWorld) checkLeftovers() {
	w := lw.world
	for _, space := range lw.spaces {
		if len(space.hosts) != 1 {
			continue // a shared volume survives a host's power loss
		}
		boot := space.hosts[0].Table().Boot()
		if !space.bootSeen {
			space.boot, space.bootSeen = boot, true
		}
		if boot != space.boot {
			space.boot = boot
			lw.reviveHostileDebris(space)
			lw.reviveSymlinks(space)
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

// leaseProbeRevivedSymlink fires when a power loss brings a co-tenant's link
// back under an engine's name (reviveSymlinks); the campaign that must
// reach it is TestLeaseCampaignRevivesSymlinks.
const leaseProbeRevivedSymlink = "lease-powerloss-revived-symlink"

// reviveSymlinks handles what a power loss brings back of the co-tenant's
// links (symlinks.go). Once an engine has renamed a guard or intent link
// away, or renamed a new epoch over the epoch link, the link is moot and
// leaves the ledger (mootLinks); a power loss may undo that rename and leave
// the very link (its identity) under its old name again. The engine then
// refuses it, rightly (a lifecycle record or epoch that is not a regular
// file), so it goes back into the ledger as a new plant would
// (recordSymlink: its model event, and the operator's repair, due at the
// next step). The writer its original named is not waited for: every
// process a record of the space can name ran on the host that lost power.
// Owner and receiver links an engine carried away are watched by
// trackReturn, and the operator's own repairs are fsynced, so a power loss
// brings back no other link. (A false alarm found by a guided campaign: the
// liveness probe refused a guard that was a link again.)
func (lw *leaseWorld) reviveSymlinks(space *leaseSpace) {
	w, root := lw.world, space.volume.Root()
	for _, link := range space.mootLinks {
		if !link.stillThere(root) {
			continue
		}
		link.repairAt = w.Step() + 1
		lw.recordSymlink(w, space, link, leaseWriter{})
		w.Probe(leaseProbeRevivedSymlink)
		w.Probe(leaseProbeRevivedSymlink + "-" + link.kind)
		w.Tracef("lease-powerloss revived symlink %s %s -> %s", link.kind, link.path, link.target)
	}
	space.mootLinks = space.mootLinks[:0]
}

// powerLoss is the OnPowerLoss hook, for a space whose only host loses
// power. Before the crash it checks the outside target of every link it
// still watches (checkSymlinkTarget) on the state every call saw: the last
// look at an engine's write through a link, which the crash may roll back
// if it was not fsynced. After the crash it takes each target's state as
// the reference for the later checks: the crash may have rolled back the
// target's own unsynced state (a moved directory's newest entries), which
// is no engine's doing, and nothing ran between the two looks.
func (lw *leaseWorld) powerLoss(h *sim.Host) (after func()) {
	space := lw.spaceOf[h]
	if space == nil || len(space.hosts) != 1 {
		return nil // a shared volume survives a host's power loss
	}
	links := space.watchedLinks()
	if len(links) == 0 {
		return nil
	}
	for _, link := range links {
		lw.checkSymlinkTarget(space, link)
	}
	return func() {
		root := space.volume.Root()
		for _, link := range links {
			link.before = treeSnapshot(root, link.moved)
		}
	}
}

// watchedLinks lists the links whose outside targets a later check reads:
// the ledger's (filed) and the moot ones a power loss may bring back.
func (s *leaseSpace) watchedLinks() []*leaseSymlink {
	var links []*leaseSymlink
	for _, c := range s.corruptions {
		if c.link != nil {
			links = append(links, c.link)
		}
	}
	for _, c := range s.carried {
		if c.link != nil {
			links = append(links, c.link)
		}
	}
	links = append(links, s.symlinks...)
	return append(links, s.mootLinks...)
}
