package leasework

// The garbled guard at a reclaim: a
// reclaimer has judged the lifecycle guard stale and re-read it; between the
// re-read and its rename into quarantine, the hostile co-tenant garbles the
// guard in place. The rename then moves the garbage, not the record it
// judged, into quarantine, which makes the operator's one-shot repair of
// that garbage moot. The engine must keep the garbage there: giving it back
// (as it gives back a live guard it grabbed by mistake) would put a corrupt
// guard that nobody holds, and that no repair is pending for, back in front
// of every caller. That was an engine bug, not a gap in the check; the
// oracle below (a give-back of hostile bytes is a violation) and the probes
// keep it settled.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// garbleAtReclaimChance is the chance, in runs whose plan enables
// FaultCorrupt, that the co-tenant garbles a guard a reclaimer is about to
// move: the window is one call wide, so the per-step hook almost never hits
// it by itself.
const garbleAtReclaimChance = 0.25

// garbleBeforeGuardReclaim runs before a rename of the guard into
// quarantine (a reclaimer's move of a stale guard).
func (f *leaseFS) garbleBeforeGuardReclaim(oldpath, newpath string) {
	lw := f.lw
	w := lw.world
	if oldpath != leaseGuardPath || !strings.HasPrefix(newpath, leaseQuarantinePath+"/") ||
		w.Plan().Get(sim.FaultCorrupt) == 0 || !w.Decisions().Chance(garbleAtReclaimChance) {
		return
	}
	space := lw.space(f.p)
	if !lw.corruptable(space, leaseGuardPath) {
		return
	}
	root := space.cotenant()
	data, err := workkit.ReadRoot(root, leaseGuardPath)
	record, ok := lw.parseRecord(data)
	if err != nil || !ok {
		return
	}
	d := w.Decisions()
	c := leaseCorruption{kind: "guard", path: leaseGuardPath, repairAt: w.Step() + 1 + d.Intn(leaseRepairDelayMax),
		writer: leaseWriter{host: record.Hostname, ns: record.PIDNamespace, pid: record.PID, startTicks: record.Start}}
	if record.Boot != nil {
		c.writer.boot = *record.Boot
	}
	c.written = workkit.Garble(data, d)
	if workkit.WriteRoot(root, leaseGuardPath, lease.O_TRUNC, c.written) != nil {
		// The hook runs inside the reclaimer's step, so the fserror fault
		// strikes the co-tenant's I/O too, and a write can fail after its
		// O_TRUNC: whatever it left is hostile bytes all the same (an
		// empty guard, unrecorded, was a false liveness alarm: lease seed
		// 6100 of a 10,000-seed campaign).
		now, changed := lw.readBackAfterFailedWrite(root, data)
		if !changed {
			return
		}
		c.written = now
	}
	workkit.SyncRoot(root, leaseNamespace)
	space.corruptions = append(space.corruptions, c)
	space.hostileBytes = append(space.hostileBytes, c.written)
	space.hostileInPlace = append(space.hostileInPlace, leaseGuardPath)
	w.Probe("lease-hostile-corrupt-guard")
	w.Probe("lease-hostile-garble-at-guard-reclaim")
	w.Tracef("lease-hostile corrupt guard at a reclaim %s", leaseGuardPath)
}

// observeGuardMove checks a rename of the guard into or out of quarantine
// against the hostile bytes: garbage moved in is kept (probe), garbage moved
// back out to the guard's name is a violation.
func (f *leaseFS) observeGuardMove(oldpath, newpath string, err error) {
	if err != nil {
		return
	}
	lw := f.lw
	space := lw.space(f.p)
	switch {
	case oldpath == leaseGuardPath && strings.HasPrefix(newpath, leaseQuarantinePath+"/"):
		if space.guardMovedIn == nil {
			space.guardMovedIn = map[string]int{}
		}
		space.guardMovedIn[newpath] = f.p.FSFaults()
		if data, err := workkit.ReadRoot(space.volume.Root(), newpath); err == nil && space.hostileWrote(data) {
			lw.world.Probe("lease-reclaim-quarantined-garbled-guard")
		}
	case newpath == leaseGuardPath && fspath.Dir(oldpath) == leaseQuarantinePath:
		lw.observeGiveBack(f.p, space, oldpath)
	}
}

// observeGiveBack judges a move of a guard out of quarantine back to the
// guard's name: giving back the hostile bytes is a violation, unless an
// injected error struck the mover after its move in. A mover that could
// not read what it moved cannot tell a holder's new guard from garbage,
// and gives it back (the namespace stays blocked for another operator
// look; nothing is lost), which lease seed 838 of a 2000-seed campaign
// reported as a violation when the mover's re-read drew EIO.
func (lw *leaseWorld) observeGiveBack(p *sim.Proc, space *leaseSpace, from string) {
	data, err := workkit.ReadRoot(space.volume.Root(), leaseGuardPath)
	if err != nil || !space.hostileWrote(data) {
		lw.world.Probe("lease-guard-given-back")
		return
	}
	if at, moved := space.guardMovedIn[from]; moved && p.FSFaults() > at {
		// The garbage blocks the namespace again: it goes back into the
		// ledger for the operator's next look, as debris a power loss
		// revives does (reviveHostileDebris).
		if !space.corruptedAt(leaseGuardPath) {
			space.corruptions = append(space.corruptions, leaseCorruption{kind: "guard", path: leaseGuardPath,
				written: data, repairAt: lw.world.Step() + 1})
		}
		lw.world.Probe("lease-unread-garbage-given-back")
		return
	}
	lw.fail(fmt.Errorf("%s gave back garbage it had moved from the lifecycle guard into quarantine (%s): "+
		"a corrupt guard nobody holds blocks %s again", p.Name(), from, space.key), false)
}

// readBackAfterFailedWrite reads the guard after a co-tenant write failed:
// changed says it no longer holds original, and now is what it holds. Each
// read may draw an injected error too, so it tries a bounded number of times.
func (lw *leaseWorld) readBackAfterFailedWrite(root lease.FS, original []byte) (now []byte, changed bool) {
	for try := 0; try < 16; try++ {
		data, err := workkit.ReadRoot(root, leaseGuardPath)
		if err == nil {
			return data, !bytes.Equal(data, original)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false
		}
	}
	lw.world.Probe("lease-hostile-garble-unreadable")
	return nil, false
}
