package leasework

// The operator's repairs of the hostile corruptions faults.go plants: each
// undoes exactly the corruption it follows, once the record's writer is
// gone, and never an engine's own later write.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
	"github.com/leasekit/leasekit/workload/workkit"
)

// repairDue runs the operator's repairs whose time has come (all of them
// when force is set). A repair undoes only the exact corruption the hook
// made; a garbled guard or intent is removed only once its writer is dead
// (an operator checks that no live process is named before deleting a
// lock file).
func (lw *leaseWorld) repairDue(force bool) {
	w := lw.world
	for _, space := range lw.spaces {
		if len(space.symlinks) > 0 {
			lw.repairSymlinks(space, force)
		}
		if force && space.unsafeLinks == 0 {
			lw.repairEpochTear(space) // after the links: never through one
		}
		if space.unsafeLinks > 0 {
			continue // repairs through a planted directory link would leave the tree
		}
		if !force && !repairsDue(space.corruptions, w.Step()) {
			continue // the common step: nothing to rebuild
		}
		kept := space.corruptions[:0]
		for _, c := range space.corruptions {
			if !force && w.Step() < c.repairAt {
				kept = append(kept, c)
				continue
			}
			if !lw.repair(space, &c) {
				kept = append(kept, c)
			} else if c.link != nil {
				lw.checkSymlinkTarget(space, c.link) // once, when the repair is done
			}
		}
		space.corruptions = kept
	}
}

// repairsDue reports whether some corruption's repair time has come.
func repairsDue(corruptions []leaseCorruption, step int) bool {
	for i := range corruptions {
		if step >= corruptions[i].repairAt {
			return true
		}
	}
	return false
}

// repair tries one repair; false means "not yet" (the writer lives).
func (lw *leaseWorld) repair(space *leaseSpace, c *leaseCorruption) bool {
	w := lw.world
	root := space.volume.Root()
	if look := c.look(space.volume); look != lookPresent {
		if look == lookInTransit {
			// A release moved the garbled guard to its private name and
			// may put it back (it could not read what it moved): not gone
			// yet (lease seed 86001844: the repair dropped it, the release
			// put it back, and the liveness probe met a corrupt guard the
			// harness no longer knew of).
			w.Probe("lease-repair-waits-guard-in-transit")
			return false
		}
		// Gone: a reclaimer removed its own garbled intent, or renamed a
		// planted link away (a power loss may bring the link back:
		// mootLinks). (An owner corruption carried away is handled by
		// trackCorruption.)
		w.Probe("lease-repair-moot-" + c.kind)
		if (c.kind == "owner" || c.kind == "receiver") && space.ownerCorrupted {
			// Gone before trackCorruption's look of this step: the forced
			// repairs at the liveness phase's start run right after the
			// fault that took it, e.g. a power loss that lost the namespace
			// with the corruption in it (a false alarm found by the guided
			// campaign of .ci/run: the history kept the lease corrupt).
			lw.ownerCorruptionGone(space, *c)
			return true
		}
		if c.link != nil {
			space.mootLinks = append(space.mootLinks, c.link)
		}
		return true
	}
	switch c.kind {
	case "owner", "receiver":
		space.hostileSerial++
		target := fspath.Join(leaseQuarantinePath, fmt.Sprintf("operator.%d", space.hostileSerial))
		if err := root.Rename(leaseReceiver(), target); err != nil {
			lw.fail(fmt.Errorf("operator repair of %s in %s: %v", c.path, space.key, err), false)
			return true
		}
		workkit.SyncRoot(root, leaseNamespace)
		workkit.SyncRoot(root, leaseQuarantinePath)
		space.ownerCorrupted = false
		w.RecordEvent("clear", models.LeaseClear{Namespace: space.key})
	default:
		if lw.writerAlive(c.writer) {
			return false
		}
		if err := root.Remove(c.path); err != nil {
			lw.fail(fmt.Errorf("operator repair of %s in %s: %v", c.path, space.key, err), false)
			return true
		}
		workkit.SyncRoot(root, fspath.Dir(c.path))
	}
	space.hostileClearedAt = w.Now()
	if c.link != nil {
		w.Probe("lease-operator-repair-symlink-" + c.kind)
	} else {
		w.Probe("lease-operator-repair-" + c.kind)
	}
	w.Tracef("lease-operator repair %s %s", c.kind, c.path)
	return true
}

// corruptionLook is where a repair's look found a corruption.
type corruptionLook uint8

const (
	lookGone corruptionLook = iota
	// lookPresent: the exact bytes, or the very link, at its path.
	lookPresent
	// lookInTransit: a guard corruption at a release's private name.
	lookInTransit
)

// look finds where c stands on disk. A due repair that waits (its writer
// lives, or a release holds the guard) is retried at every step, and
// reading the corruption back each time was about 5% of a lease campaign's
// instructions; so a look is kept with the volume's generations and reused
// while they stand. The look is root reads, which no injected fault
// reaches: no name and no byte changed, so the same reads find the same.
func (c *leaseCorruption) look(v *sim.Volume) corruptionLook {
	if c.looked.Still(v) {
		return c.lastLook
	}
	root := v.Root()
	look := lookGone
	switch {
	case c.present(root):
		look = lookPresent
	case c.kind == "guard" && guardInTransit(root, c):
		look = lookInTransit
	}
	c.lastLook = look
	c.looked.Mark(v)
	return look
}

// guardInTransit reports whether the guard corruption c (its bytes, or its
// very link) sits at a release's private name in the namespace
// (".receiver.lifecycle.released-<id>.json").
func guardInTransit(root lease.FS, c *leaseCorruption) bool {
	entries, _ := root.ReadDir(leaseNamespace)
	for _, entry := range entries {
		if !strings.HasPrefix(entry.Name, ".receiver.lifecycle.released-") {
			continue
		}
		name := fspath.Join(leaseNamespace, entry.Name)
		if c.link != nil {
			info, err := root.Lstat(name)
			if id, ok := info.Identity(); err == nil && ok && id == c.link.id {
				return true
			}
			continue
		}
		if data, err := workkit.ReadRoot(root, name); err == nil && bytes.Equal(data, c.written) {
			return true
		}
	}
	return false
}

// writerAlive reports whether the process a record names still runs (a
// zombie whose other threads run counts as alive).
func (lw *leaseWorld) writerAlive(writer leaseWriter) bool {
	for _, h := range lw.world.Hosts() {
		if h.Name() != writer.host {
			continue
		}
		if writer.boot != "" && writer.boot != h.Table().BootID() {
			return false
		}
		ns, ok := workkit.NamespaceOf(h, writer.ns)
		if !ok {
			ns = 0 // a record without a namespace: the original implementation's, on the initial one
		}
		proc := h.Table().Lookup(ns, writer.pid)
		if proc == nil || strconv.FormatUint(proc.StartTicks, 10) != writer.startTicks {
			return false
		}
		return proc.State == simproc.Running || proc.Threads > 1
	}
	return false
}
