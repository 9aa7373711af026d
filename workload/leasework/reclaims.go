package leasework

// The reclaim observer: the move of a stale receiver.lock into quarantine,
// recorded as its own history event, settled once its durability is known,
// and checked against the ground truth.

import (
	"fmt"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// leaseFS observes the one engine step the history cannot show by itself:
// the move of a stale receiver.lock into quarantine. An acquire reclaims in
// one guarded step and installs in a later one, and other processes may see
// the namespace empty in between, so the reclaim is recorded as its own
// instantaneous event (models.LeaseReclaim, legal only while the owner is
// dead) at the step it happened; the reclaimed owner is also checked dead
// against the ground truth (checkMove).
type leaseFS struct {
	lease.FS
	lw *leaseWorld
	p  *sim.Proc
}

func (f *leaseFS) RenameNoReplace(oldpath, newpath string) error {
	f.stallGuardOperator(oldpath)
	f.garbleBeforeGuardReclaim(oldpath, newpath)
	err := f.FS.RenameNoReplace(oldpath, newpath)
	f.observeGuardMove(oldpath, newpath, err)
	f.observe(oldpath, newpath, err)
	return err
}

func (f *leaseFS) Rename(oldpath, newpath string) error {
	err := f.FS.Rename(oldpath, newpath)
	f.observe(oldpath, newpath, err)
	return err
}

func (f *leaseFS) observe(oldpath, newpath string, err error) {
	if guardReclaimed(oldpath, newpath, err) {
		f.lw.world.Probe("lease-stale-guard-reclaimed")
	}
	if err != nil || oldpath != leaseReceiver() || !strings.HasPrefix(newpath, leaseQuarantinePath+"/") {
		return
	}
	lw, space := f.lw, f.lw.space(f.p)
	if lw.paused.isOperator(f.p) {
		event := lw.observeOperatorMove(space)
		lw.reclaimsPending = append(lw.reclaimsPending, leasePendingReclaim{event: event,
			space: space, path: newpath, proc: f.p})
		return
	}
	event := lw.world.RecordEvent("reclaim", models.LeaseReclaim{Namespace: space.key})
	lw.reclaimsPending = append(lw.reclaimsPending, leasePendingReclaim{event: event,
		space: space, path: newpath, proc: f.p})
	lw.moves = append(lw.moves, leaseMove{space: space, path: newpath, proc: f.p})
	lw.world.Probe("lease-reclaim-observed")
}

// guardReclaimed reports whether a rename moved the lifecycle guard into
// quarantine: a reclaim of a stale guard (or an operator's forced move).
// Its holder's release renames it away too, to a private name beside it
// (.receiver.lifecycle.released-*), which is no reclaim.
func guardReclaimed(oldpath, newpath string, err error) bool {
	return err == nil && oldpath == leaseGuardPath && strings.HasPrefix(newpath, leaseQuarantinePath+"/")
}

// leaseReclaimUndone is the Op of a reclaim event that a power loss undid
// before it was durable; LeaseOperations leaves it out of the history.
const leaseReclaimUndone = "reclaim-undone"

// leaseClearUndone is the Op of an operator's clear event (ForceReclaim's
// move of receiver.lock) that a power loss undid before it was durable;
// LeaseOperations leaves it out of the history, as it does an undone
// reclaim.
const leaseClearUndone = "clear-undone"

// leasePendingReclaim is a recorded reclaim event, or an operator's clear
// event (history index), whose move into quarantine is not known durable
// yet: the reclaimer (or the operator's ForceReclaim) has not answered, so
// it may not have fsynced both directories.
type leasePendingReclaim struct {
	event int
	space *leaseSpace
	path  string
	proc  *sim.Proc
}

// settleReclaims resolves p's pending reclaims once its Acquire answered
// (answered, with err) or p exited (reason). An answer makes them durable
// by the engine's contract (both directories fsynced before it returns),
// unless the answer is an error. After a power loss the volume is already
// in its crash state: a move that it undid (receiver.lock back, the
// quarantine entry gone) never happened for any later observer, so its
// event is marked undone; an unanswered reclaim is not acknowledged, so
// the engine may lose it. After an error or any other exit the move is in
// the page cache, which writeback may flush at any time: the operator's
// view flushes both directories so that a later power loss cannot undo it.
func (lw *leaseWorld) settleReclaims(p *sim.Proc, answered bool, err error, reason sim.ExitReason) {
	kept := lw.reclaimsPending[:0]
	for _, r := range lw.reclaimsPending {
		if r.proc != p {
			kept = append(kept, r)
			continue
		}
		undone := leaseReclaimUndone
		switch lw.world.History()[r.event].Input.(type) {
		case models.LeaseReclaim:
		case models.LeaseClear:
			undone = leaseClearUndone
		default:
			panic(fmt.Sprintf("sim: pending reclaim %d of %s is a %s event", r.event, p.Name(), lw.world.History()[r.event].Op))
		}
		root := r.space.volume.Root()
		switch {
		case answered && err == nil:
		case !answered && reason == sim.ExitPowerLoss:
			_, errQuarantine := root.Lstat(r.path)
			_, errReceiver := root.Lstat(leaseReceiver())
			if errQuarantine != nil && errReceiver == nil {
				lw.world.History()[r.event].Op = undone
				lw.world.Probe("lease-" + undone + "-by-powerloss") // lease-reclaim-undone-by-powerloss, lease-clear-undone-by-powerloss
			}
		default:
			workkit.SyncRoot(root, leaseNamespace)
			workkit.SyncRoot(root, leaseQuarantinePath)
		}
	}
	lw.reclaimsPending = kept
}

// leaseMove is a move of receiver.lock into quarantine, checked between
// steps (a root view read inside a process would draw injected errors).
type leaseMove struct {
	space *leaseSpace
	path  string
	proc  *sim.Proc
}

// checkMove checks that a reclaimed owner was dead in the ground truth.
func (lw *leaseWorld) checkMove(m leaseMove) error {
	data, err := workkit.ReadRoot(m.space.volume.Root(), fspath.Join(m.path, "owner.json"))
	record, ok := lw.parseRecord(data)
	if err == nil && !ok && m.space.hostileWrote(data) {
		// The hook corrupted owner.json between the engine's last check
		// and its rename: the corrupt record is the evidence now.
		lw.world.Probe("lease-reclaim-raced-corruption")
		return nil
	}
	if err != nil && m.movedHostileReceiver() {
		// The operator's repair removed receiver.lock after the engine's
		// last check and the hook's "receiver" corruption put a file of its
		// own at the name: that file is what the rename moved.
		lw.world.Probe("lease-reclaim-raced-hostile-receiver")
		return nil
	}
	if err != nil && (m.space.isPlantedLink(fspath.Join(m.path, "owner.json")) || m.space.isPlantedLink(m.path)) {
		// The co-tenant planted a link after the engine's last check.
		lw.world.Probe("lease-reclaim-raced-symlink")
		return nil
	}
	if err != nil || !ok {
		return fmt.Errorf("%s moved receiver.lock into %s without a valid owner.json (%v, %q)", m.proc.Name(), m.path, err, data)
	}
	owner := lw.sessionProc[record.Session]
	if owner != nil && lw.deathByProc[owner.Table()] == owner.Leader() {
		return fmt.Errorf("%s reclaimed the lease of live owner %s (generation %s, PID %d on %s)", m.proc.Name(),
			owner.Name(), record.Generation, record.PID, record.Hostname)
	}
	if diedAt, dead := lw.deathAt[owner]; dead {
		lw.impostors.reclaimed(m.space, m.proc, record.Generation, diedAt)
	}
	return nil
}

// movedHostileReceiver reports whether what the move put at m.path is the
// hook's own receiver.lock file (the "receiver" corruption writes a plain
// file where no receiver.lock was), read from the root view between steps.
func (m leaseMove) movedHostileReceiver() bool {
	data, err := workkit.ReadRoot(m.space.volume.Root(), m.path)
	return err == nil && m.space.hostileWrote(data)
}
