package models

// AdmissionSwap is the environment event "a hostile co-tenant renamed a
// copy of an earlier valid slot record over active.json": the record of
// ClaimID at Revision in Phase, written by OwnerProc on OwnerHost, which is
// alive and holds no helper in it (the workload swaps in only such
// records). The slot then holds that claim as its owner wrote it, so:
//   - the displaced holder's compare-and-swap must lose (its revision is
//     not the slot's);
//   - the swapped-in record's owner, presenting a handle of exactly that
//     revision, matches it (the engine compares the record's bytes, and
//     these are the bytes it wrote): the model lets that CAS win, which is
//     the engine's revision rule, not a hole in it;
//   - an acquire sees a live owner (active or indeterminate).
//
// The displaced record is kept (with its owner's and helper's ground truth
// following deaths and reboots) for AdmissionReturn.
type AdmissionSwap struct {
	ClaimID   string
	Revision  string
	Phase     AdmissionPhase
	OwnerProc int
	OwnerHost string
}

// AdmissionReturn is the environment event "the operator renamed the
// record a swap displaced back over active.json" (the workload records it
// only while the file still holds the swapped-in bytes).
type AdmissionReturn struct{}

// swapped applies an AdmissionSwap. The workload swaps only over a valid
// record, so a state with no claim in the slot is not the world's: it has
// no successor.
func (s admissionState) swapped(in AdmissionSwap) []any {
	if s.slot != slotClaimed {
		return nil
	}
	return []any{admissionState{slot: slotClaimed, displaced: s.admissionRecord, admissionRecord: admissionRecord{
		claimID: in.ClaimID, revision: in.Revision, phase: in.Phase,
		ownerProc: in.OwnerProc, ownerHost: in.OwnerHost, ownerAlive: true,
	}}}
}

// returned applies an AdmissionReturn.
func (s admissionState) returned() admissionState {
	return admissionState{slot: slotClaimed, admissionRecord: s.displaced}
}
