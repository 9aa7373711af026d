package admissionwork

import (
	"bytes"
	"fmt"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/modelmap"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// Another live record swapped in: the co-tenant
// keeps each valid slot record as its owner wrote it and, while the current
// holder H is alive and no compare-and-swap is in flight, renames a copy of
// an earlier record over the slot (durably, as an editor saves) whose owner
// O is another controller, still alive. The slot then holds a valid claim,
// but O's (its ID, revision, phase and owner). What the engine must do:
//   - H's next update or Release loses its compare-and-swap (CASChanged);
//   - an acquire by anyone sees the slot held by a live owner (active, or
//     indeterminate across hosts), and nothing is deleted;
//   - O, if it kept a handle of exactly that revision, matches it: the
//     engine compares the record's bytes, and these are the bytes O wrote.
//     The model (models.AdmissionSwap) lets that CAS win and judges
//     everything after it.
//
// The operator (returnSwappedRecord) renames H's last record back within
// admissionRepairDelayMax steps, or at once when the liveness phase starts
// (models.AdmissionReturn), if the slot still holds the swapped-in bytes.

// swapScratch is the co-tenant's directory for the copies it renames.
const swapScratch = "/home/outside/scratch"

// admissionRecordsMax bounds the records the co-tenant keeps.
const admissionRecordsMax = 16

// slotRecord is a valid slot record as its owner wrote it.
type slotRecord struct {
	data  []byte
	owner *sim.Proc
	claim admission.Claim
}

// recordSwap is a swap in effect: the record moved aside (displaced) and
// the one swapped in, and the operator's step to return it.
type recordSwap struct {
	displaced, in slotRecord
	returnAt      int
}

// noteWritten keeps the record p's handle wrote, if the slot holds it now
// (a root read: it takes no step).
func (aw *admissionWorld) noteWritten(p *sim.Proc, claim admission.Claim) {
	data, err := workkit.ReadRoot(aw.volume.Root(), admissionFile)
	if err != nil || !bytes.Equal(data, claim.Bytes()) {
		return
	}
	if len(aw.records) == admissionRecordsMax {
		aw.records = append(aw.records[:0:0], aw.records[1:]...)
	}
	aw.records = append(aw.records, slotRecord{data: data, owner: p, claim: claim})
}

// swapCandidates returns the record the slot holds now (H's, H alive) and
// the earlier records of other live processes, without a helper, that the
// co-tenant may swap in; nil when the reach is off or the slot is not a
// plain valid record with no claim in flight.
func (aw *admissionWorld) swapCandidates() (*slotRecord, []slotRecord) {
	if aw.opts.RecordSwaps < 0 || aw.swap != nil || aw.corrupted || aw.symlinked || aw.legacy || aw.claimBusy() ||
		len(aw.records) == 0 {
		return nil, nil
	}
	current := aw.records[len(aw.records)-1]
	data, err := workkit.ReadRoot(aw.volume.Root(), admissionFile)
	if err != nil || !bytes.Equal(data, current.data) || !aw.Alive(current.owner) {
		return nil, nil
	}
	var sources []slotRecord
	for _, r := range aw.records[:len(aw.records)-1] {
		if r.owner.ProcessID() != current.owner.ProcessID() && aw.Alive(r.owner) && r.claim.HelperOwner == nil &&
			r.claim.ID != current.claim.ID {
			sources = append(sources, r)
		}
	}
	return &current, sources
}

// swapInRecord renames a copy of source over the slot, which holds current.
func (aw *admissionWorld) swapInRecord(w *sim.World, current *slotRecord, source slotRecord) {
	if !aw.renameOver(source.data) {
		return
	}
	aw.slot.Spoil()
	aw.swap = &recordSwap{displaced: *current, in: source, returnAt: w.Step() + 1 + w.Decisions().Intn(admissionRepairDelayMax)}
	w.RecordEvent("record-swap", models.AdmissionSwap{ClaimID: source.claim.ID, Revision: source.claim.Revision,
		Phase: modelmap.AdmissionPhase(source.claim.Phase), OwnerProc: source.owner.ProcessID(),
		OwnerHost: source.owner.Host().Name()})
	w.Tracef("cotenant record-swap %s's claim %s over %s's claim %s", source.owner.Name(), source.claim.ID,
		current.owner.Name(), current.claim.ID)
	w.Probe("cotenant-record-swapped-in")
}

// renameOver writes data to a new file of the co-tenant's and renames it
// over the slot (as an editor saves), durably.
func (aw *admissionWorld) renameOver(data []byte) bool {
	root := aw.volume.FS().View(admissionUID)
	aw.volume.FS().MkdirAll(swapScratch, 0o700, admissionUID)
	aw.recordSwaps++
	temp := fspath.Join(swapScratch, fmt.Sprintf("record-%d", aw.recordSwaps))
	return workkit.RenameOver(root, temp, admissionFile, data)
}

// returnSwappedRecord is the operator: once its time has come (at once when
// force is set, at the liveness phase's start) and no compare-and-swap is
// in flight, it renames the displaced record back over the slot. A slot
// that no longer holds the swapped-in bytes is left as it is: an engine
// call (the swapped-in record's owner's, which the model allows) or another
// hostile write changed it, and the model judged that.
func (aw *admissionWorld) returnSwappedRecord(force bool) {
	if aw.swap == nil || (!force && (aw.world.Step() < aw.swap.returnAt || aw.claimBusy())) {
		return
	}
	data, err := workkit.ReadRoot(aw.volume.Root(), admissionFile)
	if err != nil || !bytes.Equal(data, aw.swap.in.data) {
		aw.swap = nil
		return
	}
	if !aw.renameOver(aw.swap.displaced.data) {
		return // an injected error: the operator retries at a later step
	}
	aw.swap = nil
	aw.slot.Spoil() // the operator, not the engine, wrote the slot: nothing promised is on disk now
	aw.world.RecordEvent("record-return", models.AdmissionReturn{})
	aw.world.Probe("admission-operator-record-returned")
}

// noteSwappedCAS fires the probes of a compare-and-swap while a swap is in
// effect: the displaced holder's lost, the swapped-in owner's matched.
func (aw *admissionWorld) noteSwappedCAS(p *sim.Proc, kind models.CASKind) {
	if aw.swap == nil {
		return
	}
	switch {
	case kind == models.CASChanged && p.ProcessID() == aw.swap.displaced.owner.ProcessID():
		aw.world.Probe("admission-swapped-record-cas-refused")
	case kind == models.CASOK && p.ProcessID() == aw.swap.in.owner.ProcessID():
		aw.world.Probe("admission-swapped-record-owner-matched")
	}
}

// noteSwappedAcquire fires the probe of an acquire refused while another
// live owner's record is swapped in.
func (aw *admissionWorld) noteSwappedAcquire(kind models.AdmissionAcquireKind) {
	if aw.swap != nil && (kind == models.AdmissionActive || kind == models.AdmissionIndeterminate) {
		aw.world.Probe("admission-swapped-record-held")
	}
}
