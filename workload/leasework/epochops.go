package leasework

// Epoch operators. An operator process waits until a few leases of its
// space were acquired (and most of them released), then the epoch counter
// (receiver.epoch.json) or, a quarter of the time, its issued mark
// (receiver.epoch.issued.json) is torn: a write of it cut short, as a full
// disk or a careless edit leaves it. Every acquire now refuses
// corrupt-epoch, and the operator does what the refusal asks: Inspect
// lists the file as a blocker, and the operator forces it with an epoch
// floor. The floor is what the operator can see (the largest epoch in
// receiver.lock and quarantine/, at least 1), or, in a hurry, 1. Released
// leases leave nothing behind, so either floor may be below epochs already
// issued. When the engine refuses the floor and names the epoch its
// evidence proves (ForceResult.ProvenEpoch), the operator forces again
// with that floor, as the refusal asks.
//
// The oracle is the one every acquire already meets (noteEpoch, and
// models.LeaseModel's epoch floor): an acquired epoch must exceed every
// epoch returned before its call. An engine that accepts a floor below
// the epochs it issued hands out an epoch again, lower than one a fenced
// resource has seen.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Bounds of one epoch operator's life.
const (
	// epochOperatorWaitRounds bounds the looks for enough issued epochs.
	epochOperatorWaitRounds = 80
	// epochOperatorForceRounds bounds the Inspect-and-force rounds.
	epochOperatorForceRounds = 12
	// epochOperatorIssuedMin is the fewest epochs returned before the tear.
	epochOperatorIssuedMin = 2
)

// leaseEpochIssuedPath is the epoch counter's issued mark.
var leaseEpochIssuedPath = fspath.Join(leaseNamespace, "receiver.epoch.issued.json")

// epochTear is a torn epoch file the operator has not resolved yet.
type epochTear struct {
	// path is the torn file; original the bytes the tear replaced,
	// garbage what it wrote.
	path              string
	original, garbage []byte
}

// spawnEpochOperators starts the run's epoch operators on drawn hosts. The
// liveness phase waits for them, so no force is in flight then.
func (lw *leaseWorld) spawnEpochOperators() error {
	w := lw.world
	lw.epochOperators = map[*sim.Proc]bool{}
	for i := 0; i < lw.opts.EpochOperators; i++ {
		h := w.Hosts()[w.Decisions().Intn(len(w.Hosts()))]
		p, err := w.Spawn(h, sim.ProcSpec{Name: fmt.Sprintf("epoch-operator-%d", i), UID: leaseUID,
			Exe: "/usr/sbin/leasekit-operator"}, lw.epochOperator)
		if err != nil {
			return err
		}
		lw.epochOperators[p] = true
		lw.workers++
	}
	return nil
}

// epochOperator is an epoch operator's body: wait, tear, force.
func (lw *leaseWorld) epochOperator(p *sim.Proc) {
	w := lw.world
	d := w.Decisions()
	space := lw.space(p)
	issuedMin := uint64(epochOperatorIssuedMin + d.Intn(4))
	for i := 0; i < epochOperatorWaitRounds && space.epochTear == nil; i++ {
		_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(5))*time.Millisecond)
		if space.epochMaxReturned >= issuedMin {
			// The tear is the world's, not this process's I/O: made
			// through a harness view, no injected FS fault strikes it.
			lw.tearEpoch(space)
		}
	}
	m := lw.manager(p)
	floor := uint64(1)
	if !d.Chance(0.5) { // not hurried: what it can see
		floor = max(floor, visibleEpoch(space.volume.Root()))
	}
	for i := 0; i < epochOperatorForceRounds && space.epochTear != nil; i++ {
		floor = lw.forceEpoch(p, m, space, floor)
		if space.epochTear != nil {
			_ = p.Clock().Sleep(context.Background(), time.Duration(1+d.Intn(5))*time.Millisecond)
		}
	}
}

// tearEpoch cuts the epoch counter, or its issued mark, to half its
// bytes, fsynced (a write cut short): never valid JSON. It tears only a
// regular file no link or earlier tear holds.
func (lw *leaseWorld) tearEpoch(space *leaseSpace) {
	w := lw.world
	if space.epochLinked || space.unsafeLinks > 0 {
		return
	}
	path, kind := leaseEpochPath, "counter"
	if w.Decisions().Chance(0.25) {
		path, kind = leaseEpochIssuedPath, "mark"
	}
	root := space.cotenant()
	info, err := root.Lstat(path)
	if err != nil || !info.IsRegular() {
		return
	}
	data, err := workkit.ReadRoot(root, path)
	if err != nil || len(data) < 2 || !json.Valid(data) {
		return
	}
	garbage := data[:len(data)/2]
	if err := workkit.WriteRoot(root, path, lease.O_TRUNC, garbage); err != nil {
		return
	}
	space.epochTear = &epochTear{path: path, original: data, garbage: garbage}
	w.RecordEvent("corrupt-epoch", models.LeaseEpochCorruption{Namespace: space.key})
	w.Probe("lease-epoch-operator-tore-" + kind)
	w.Tracef("lease-epoch-operator tore %s (was %q, now %q)", path, data, garbage)
}

// forceEpoch is one round of the operator: Inspect, and force the epoch
// file Inspect lists with floor. No epoch blocker, once the torn bytes are
// gone, means an acquire that had read the file before the tear replaced
// it: it is valid again. While they are still there, Inspect read the
// files as a writer replaced one, and the operator looks again. It returns
// the floor of the next round: the epoch the engine's evidence proves,
// when it refused floor as below it.
func (lw *leaseWorld) forceEpoch(p *sim.Proc, m *lease.Manager, space *leaseSpace, floor uint64) uint64 {
	w := lw.world
	projection, err := m.Inspect(context.Background())
	if err != nil {
		return floor
	}
	blocked := false
	for _, blocker := range projection.Blockers {
		blocked = blocked || blocker.Kind == lease.BlockerEpoch
	}
	if !blocked && lw.tearStillThere(space) {
		// Inspect read the files while a writer under the guard replaced
		// one (a changed read is no blocker), so it listed none; the torn
		// file is still there: look again.
		w.Probe("lease-epoch-operator-inspect-raced")
		return floor
	}
	if !blocked {
		w.Probe("lease-epoch-operator-file-replaced")
		lw.epochRepaired(space)
		return floor
	}
	res, err := m.ForceReclaim(context.Background(), lease.ForceRequest{Kind: lease.BlockerEpoch, EpochFloor: floor})
	w.Tracef("lease-epoch-operator proc=%s force floor=%d: %+v %v", p.Name(), floor, res, err)
	switch {
	case err != nil:
		w.Probe("lease-epoch-operator-error")
	case res.Kind == lease.ForceMoved:
		w.Probe("lease-epoch-operator-forced")
		lw.epochRepaired(space)
	case res.Kind == lease.ForceRefused && res.ProvenEpoch > floor:
		w.Probe("lease-epoch-operator-floor-refused")
		return res.ProvenEpoch
	case res.Kind == lease.ForceRefused:
		w.Probe("lease-epoch-operator-refused")
	default:
		w.Probe("lease-epoch-operator-nothing")
		lw.epochRepaired(space)
	}
	return floor
}

// tearStillThere reports whether the torn file still holds the tear's
// bytes, read as the world sees it.
func (lw *leaseWorld) tearStillThere(space *leaseSpace) bool {
	tear := space.epochTear
	data, err := workkit.ReadRoot(space.cotenant(), tear.path)
	return err == nil && string(data) == string(tear.garbage)
}

// epochRepaired files the end of a tear: the counter is valid again.
func (lw *leaseWorld) epochRepaired(space *leaseSpace) {
	space.epochTear = nil
	lw.world.RecordEvent("repair-epoch", models.LeaseEpochRepair{Namespace: space.key})
}

// repairEpochTear is the fallback when the operator died before it
// resolved its tear (at the liveness phase's start): the torn file, if
// the garbage is still there, gets its original bytes back.
func (lw *leaseWorld) repairEpochTear(space *leaseSpace) {
	tear := space.epochTear
	if tear == nil {
		return
	}
	root := space.cotenant() // the workload's uid, whose counter it is
	if data, err := workkit.ReadRoot(root, tear.path); err == nil && string(data) == string(tear.garbage) {
		// A new file renamed over the name, as the engine writes it: a
		// co-tenant's hard link of the torn file keeps its bytes.
		temp := fspath.Join(leaseNamespace, ".operator-epoch")
		err := workkit.WriteRoot(root, temp, lease.O_CREATE|lease.O_EXCL, tear.original)
		if err == nil {
			err = root.Rename(temp, tear.path)
		}
		if err != nil {
			lw.fail(fmt.Errorf("operator repair of the torn epoch counter in %s: %v", space.key, err), false)
		}
		workkit.SyncRoot(root, leaseNamespace)
		lw.world.Probe("lease-epoch-tear-restored")
	}
	lw.epochRepaired(space)
}

// visibleEpoch is the largest epoch an operator finds on disk: in
// receiver.lock and in the owners reclaimed into quarantine/ (0: none).
func visibleEpoch(root lease.FS) uint64 {
	owners := []string{leaseOwnerPath}
	entries, _ := root.ReadDir(leaseQuarantinePath)
	for _, e := range entries {
		owners = append(owners, fspath.Join(leaseQuarantinePath, e.Name, "owner.json"))
	}
	var largest uint64
	for _, name := range owners {
		data, err := workkit.ReadRoot(root, name)
		var owner struct {
			Epoch uint64 `json:"epoch"`
		}
		if err == nil && json.Unmarshal(data, &owner) == nil {
			largest = max(largest, owner.Epoch)
		}
	}
	return largest
}
