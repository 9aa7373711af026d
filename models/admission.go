package models

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// The export admission model (engine `admission`): one slot file,
// active.json, updated by compare-and-swap on its bytes. Every write rotates
// the revision, so a CAS is modelled as "the slot still holds the revision
// the caller last saw". The model is not partitioned: there is one slot.
//
// State: empty | corrupt | claimed(claim ID, revision, phase, owner,
// helper). The owner and helper carry the ground truth the simulator knows
// and the engine can only inspect: alive or dead, and whether the owner's
// host rebooted since the claim was written ("boot gone").
//
// Legal outcomes at the linearization point:
//
//	Acquire    acquired(id, rev)  empty, or claimed with a recoverable
//	                              disposition (below); the new claim is
//	                              parent-owned, no helper, owned by the caller.
//	           active             claimed, disposition active.
//	           indeterminate      claimed (the inspector may always answer
//	                              "unknown").
//	           contention         any state (bounded attempts).
//	           corrupt            corrupt.
//	Transition invalid            iff AdmissionTransitionValid(from, to,
//	                              helper) is false (decided on the caller's
//	                              view, before any I/O; no effect).
//	           ok(new rev)        the slot holds ClaimID at FromRevision (and
//	                              so FromPhase); new rev != FromRevision.
//	           changed            the slot does not hold it.
//	Release    invalid            iff the caller's view is not parent-owned
//	                              without a helper (no effect).
//	           released / changed  as for Transition; released empties the slot.
//
// Disposition of a claim, the original's exportAdmissionDisposition evaluated on
// the ground truth instead of an inspection:
//
//	owner alive                              active
//	helper recorded on another host          indeterminate
//	cleanup-unsafe                           recoverable iff owner boot gone
//	parent-owned                             recoverable
//	helper-launching / helper-active:
//	    owner boot gone                      recoverable
//	    no helper recorded                   indeterminate
//	    helper alive                         active, else indeterminate
//
// "Owner boot gone" is the truth the original approximates with "recorded boot
// ID differs from mine": an acquirer on another host sharing the file must
// not treat a live remote owner as rebooted. The bug "a lost update on the
// admission slot" shows as an acquire over a claim that is not recoverable,
// or a CAS that succeeds on a stale revision.
//
// A helper recorded after it already exited is modelled as alive (the model
// has no record of dead processes it has not seen in the slot). That only
// widens "active" over "indeterminate"; both refuse, so no bug is hidden
// that could delete or take over anything.

// AdmissionPhase is the lifecycle phase of the admission's helper.
type AdmissionPhase uint8

const (
	PhaseParentOwned AdmissionPhase = iota + 1
	PhaseHelperLaunching
	PhaseHelperActive
	PhaseCleanupUnsafe
)

func (p AdmissionPhase) String() string {
	switch p {
	case PhaseParentOwned:
		return "parent-owned"
	case PhaseHelperLaunching:
		return "helper-launching"
	case PhaseHelperActive:
		return "helper-active"
	case PhaseCleanupUnsafe:
		return "cleanup-unsafe"
	}
	return fmt.Sprintf("AdmissionPhase(%d)", int(p))
}

// AdmissionTransitionValid is the original's transition table (`valid` in
// updateExportAdmission), written out again here on purpose: the model
// must not share it with the engine.
func AdmissionTransitionValid(current, next AdmissionPhase, helper bool) bool {
	switch next {
	case PhaseHelperLaunching:
		return current == PhaseParentOwned && !helper
	case PhaseHelperActive:
		return current == PhaseHelperLaunching && helper
	case PhaseParentOwned:
		return (current == PhaseHelperLaunching || current == PhaseHelperActive) && !helper
	case PhaseCleanupUnsafe:
		return current != PhaseParentOwned && (!helper || current == PhaseHelperActive)
	}
	return false
}

// AdmissionAcquire is the input of admission.Acquire.
type AdmissionAcquire struct {
	Proc int
	Host string
}

// AdmissionAcquireKind is the class of an acquire result.
type AdmissionAcquireKind uint8

const (
	AdmissionAcquired AdmissionAcquireKind = iota + 1
	AdmissionActive
	AdmissionIndeterminate
	AdmissionContention
	AdmissionCorrupt
)

// AdmissionAcquireResult is the output of admission.Acquire (or Unknown{}).
type AdmissionAcquireResult struct {
	Kind     AdmissionAcquireKind
	ClaimID  string // when Acquired
	Revision string // when Acquired
}

// AdmissionTransition is the input of one lifecycle update
// (BeginHelperLaunch, BindHelper, Settle, MarkCleanupUnsafe), as the
// caller's handle sees it: the claim and revision it holds, its current
// phase, the target phase, and the helper the update writes (0 = none; for
// BindHelper the child, for MarkCleanupUnsafe the handle's current helper).
type AdmissionTransition struct {
	Proc         int
	ClaimID      string
	FromRevision string
	FromPhase    AdmissionPhase
	ToPhase      AdmissionPhase
	Helper       int
	HelperHost   string
}

// CASKind is the outcome of a compare-and-swap update or release.
type CASKind uint8

const (
	// CASOK: the update (or release) was written.
	CASOK CASKind = iota + 1
	// CASChanged: the slot no longer held the caller's bytes; nothing written.
	CASChanged
	// CASInvalid: refused by the transition table (or release rule) before
	// any I/O.
	CASInvalid
)

// AdmissionTransitionResult is the output of a lifecycle update (or
// Unknown{}). Revision is the new revision, when OK.
type AdmissionTransitionResult struct {
	Kind     CASKind
	Revision string
}

// AdmissionRelease is the input of Admission.Release, as the caller's
// handle sees the claim.
type AdmissionRelease struct {
	Proc      int
	ClaimID   string
	Revision  string
	Phase     AdmissionPhase
	HasHelper bool
}

// AdmissionReleaseResult is the output of Admission.Release (or Unknown{}).
// CASOK means released.
type AdmissionReleaseResult struct {
	Kind CASKind
}

// AdmissionCorruption is the environment event "active.json was corrupted
// externally".
type AdmissionCorruption struct{}

// AdmissionClear is the environment event "an operator removed active.json".
type AdmissionClear struct{}

// AdmissionLegacy is the environment event "active.json holds an original-implementation
// (legacy) record whose owner is dead, written on Host in its current boot"
// (a simulator's setup). Phase gives its meaning: PhaseCleanupUnsafe for a
// schema-1 record (its detached helper may outlive the owner: recoverable
// only once Host reboots), PhaseParentOwned for a schema-2 parent-owned
// record (recoverable at once). The claim ID and revision are unknown: no
// caller holds the record, so no compare-and-swap of it can succeed.
type AdmissionLegacy struct {
	Host  string
	Phase AdmissionPhase
}

type admissionSlot uint8

const (
	slotEmpty admissionSlot = iota
	slotClaimed
	slotCorrupt
)

type admissionDisposition uint8

const (
	dispositionActive admissionDisposition = iota + 1
	dispositionIndeterminate
	dispositionRecoverable
)

// admissionState is one possible state of the slot. Comparable. displaced
// is the record a hostile swap (AdmissionSwap) moved aside, which the
// operator's AdmissionReturn puts back.
type admissionState struct {
	slot admissionSlot
	admissionRecord
	displaced admissionRecord
}

// admissionRecord is one claim record and the ground truth of its owner
// and helper.
type admissionRecord struct {
	claimID       string // "" = unknown (written by an operation of unknown outcome)
	revision      string // "" = unknown; never equals a presented revision
	phase         AdmissionPhase
	ownerProc     int
	ownerHost     string
	ownerAlive    bool
	ownerBootGone bool
	helperProc    int // 0 = none recorded
	helperHost    string
	helperAlive   bool
}

func (s admissionState) disposition() admissionDisposition {
	switch {
	case s.ownerAlive:
		return dispositionActive
	case s.helperProc != 0 && s.helperHost != s.ownerHost:
		return dispositionIndeterminate
	case s.phase == PhaseCleanupUnsafe:
		if s.ownerBootGone {
			return dispositionRecoverable
		}
		return dispositionIndeterminate
	case s.phase == PhaseParentOwned:
		return dispositionRecoverable
	case s.ownerBootGone:
		return dispositionRecoverable
	case s.helperProc == 0:
		return dispositionIndeterminate
	case s.helperAlive:
		return dispositionActive
	}
	return dispositionIndeterminate
}

// holds reports whether the slot holds the caller's claim at revision.
func (s admissionState) holds(claimID, revision string) bool {
	return s.slot == slotClaimed && s.claimID != "" && s.claimID == claimID &&
		s.revision != "" && s.revision == revision
}

func (s admissionState) claimedBy(in AdmissionAcquire, claimID, revision string) admissionState {
	return admissionState{slot: slotClaimed, admissionRecord: admissionRecord{
		claimID: claimID, revision: revision, phase: PhaseParentOwned,
		ownerProc: in.Proc, ownerHost: in.Host, ownerAlive: true,
	}}
}

// died applies the death of proc to r.
func (r admissionRecord) died(proc int) admissionRecord {
	if r.ownerProc == proc {
		r.ownerAlive = false
	}
	if r.helperProc == proc {
		r.helperAlive = false
	}
	return r
}

// rebooted applies a reboot of host to r.
func (r admissionRecord) rebooted(host string) admissionRecord {
	if r.ownerHost == host {
		r.ownerAlive, r.ownerBootGone = false, true
	}
	if r.helperProc != 0 && r.helperHost == host {
		r.helperAlive = false
	}
	return r
}

func (s admissionState) transitioned(in AdmissionTransition, revision string) admissionState {
	next := s
	next.phase, next.revision = in.ToPhase, revision
	if in.Helper != s.helperProc {
		next.helperProc, next.helperHost, next.helperAlive = in.Helper, in.HelperHost, in.Helper != 0
	}
	return next
}

func admissionStep(state, input, output any) []any {
	s := state.(admissionState)
	switch in := input.(type) {
	case AdmissionAcquire:
		return admissionStepAcquire(s, in, output)
	case AdmissionTransition:
		return admissionStepTransition(s, in, output)
	case AdmissionRelease:
		return admissionStepRelease(s, in, output)
	case ProcessDeath:
		if s.slot == slotClaimed {
			s.admissionRecord = s.admissionRecord.died(in.Proc)
		}
		s.displaced = s.displaced.died(in.Proc)
		return []any{s}
	case Reboot:
		if s.slot == slotClaimed {
			s.admissionRecord = s.admissionRecord.rebooted(in.Host)
		}
		s.displaced = s.displaced.rebooted(in.Host)
		return []any{s}
	case AdmissionSwap:
		return s.swapped(in)
	case AdmissionReturn:
		return []any{s.returned()}
	case AdmissionQuarantine:
		return s.quarantined(output)
	case PIDReuse:
		return []any{s}
	case AdmissionCorruption:
		return []any{admissionState{slot: slotCorrupt}}
	case AdmissionClear:
		return []any{admissionState{}}
	case AdmissionLegacy:
		return []any{admissionState{slot: slotClaimed, admissionRecord: admissionRecord{phase: in.Phase, ownerHost: in.Host}}}
	}
	panic(fmt.Sprintf("models: admission model got input %T", input))
}

func admissionStepAcquire(s admissionState, in AdmissionAcquire, output any) []any {
	recoverable := s.slot == slotClaimed && s.disposition() == dispositionRecoverable
	out, known := output.(AdmissionAcquireResult)
	if !known {
		mustUnknown(output)
		next := []any{s}
		if s.slot == slotEmpty || recoverable {
			next = append(next, s.claimedBy(in, "", ""))
		}
		if recoverable {
			next = append(next, admissionState{}) // removed the stale claim, then cut short
		}
		return next
	}
	legal := false
	switch out.Kind {
	case AdmissionAcquired:
		legal = (s.slot == slotEmpty || recoverable) && out.ClaimID != "" && out.Revision != ""
		if legal {
			return []any{s.claimedBy(in, out.ClaimID, out.Revision)}
		}
	case AdmissionActive:
		legal = s.slot == slotClaimed && s.disposition() == dispositionActive
	case AdmissionIndeterminate:
		legal = s.slot == slotClaimed
	case AdmissionContention:
		legal = true
	case AdmissionCorrupt:
		legal = s.slot == slotCorrupt
	}
	if legal {
		return []any{s}
	}
	return nil
}

func admissionStepTransition(s admissionState, in AdmissionTransition, output any) []any {
	valid := AdmissionTransitionValid(in.FromPhase, in.ToPhase, in.Helper != 0)
	// Matching revisions mean matching bytes, so the phase must match too.
	swaps := valid && s.holds(in.ClaimID, in.FromRevision) && s.phase == in.FromPhase
	out, known := output.(AdmissionTransitionResult)
	if !known {
		mustUnknown(output)
		if swaps {
			return []any{s, s.transitioned(in, "")}
		}
		return []any{s}
	}
	switch out.Kind {
	case CASInvalid:
		if !valid {
			return []any{s}
		}
	case CASOK:
		if swaps && out.Revision != "" && out.Revision != in.FromRevision {
			return []any{s.transitioned(in, out.Revision)}
		}
	case CASChanged:
		if valid && !s.holds(in.ClaimID, in.FromRevision) {
			return []any{s}
		}
	}
	return nil
}

func admissionStepRelease(s admissionState, in AdmissionRelease, output any) []any {
	valid := in.Phase == PhaseParentOwned && !in.HasHelper
	swaps := valid && s.holds(in.ClaimID, in.Revision) && s.phase == in.Phase && s.helperProc == 0
	out, known := output.(AdmissionReleaseResult)
	if !known {
		mustUnknown(output)
		if swaps {
			return []any{s, admissionState{}}
		}
		return []any{s}
	}
	switch out.Kind {
	case CASInvalid:
		if !valid {
			return []any{s}
		}
	case CASOK:
		if swaps {
			return []any{admissionState{}}
		}
	case CASChanged:
		if valid && !s.holds(in.ClaimID, in.Revision) {
			return []any{s}
		}
	}
	return nil
}

func admissionHash(state any) uint64 {
	s := state.(admissionState)
	h := newHasher()
	h.int(int64(s.slot))
	h.string(s.claimID)
	h.string(s.revision)
	h.int(int64(s.phase))
	h.int(int64(s.ownerProc))
	h.bool(s.ownerAlive)
	h.bool(s.ownerBootGone)
	h.int(int64(s.helperProc))
	h.bool(s.helperAlive)
	h.string(s.displaced.claimID)
	h.string(s.displaced.revision)
	h.int(int64(s.displaced.ownerProc))
	h.bool(s.displaced.ownerAlive)
	return h.sum
}

// AdmissionModel returns the export admission model.
func AdmissionModel() porcupine.Model {
	nondeterministic := AdmissionNondeterministicModel()
	return nondeterministic.ToModel()
}

// AdmissionNondeterministicModel is AdmissionModel before the power-set
// construction (see LeaseNondeterministicModel).
func AdmissionNondeterministicModel() porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Init:              func() []any { return []any{admissionState{}} },
		Step:              admissionStep,
		Hash:              admissionHash,
		DescribeOperation: DescribeAdmissionOperation,
		DescribeState:     DescribeAdmissionState,
	}
}

// ValidateAdmissionHistory checks the history contract (see the package
// comment) for an admission history.
func ValidateAdmissionHistory(ops []porcupine.Operation) error {
	return validateHistory(ops, func(input any) (procOp, bool) {
		switch in := input.(type) {
		case AdmissionAcquire:
			return procOp{output: AdmissionAcquireResult{}, proc: in.Proc, host: in.Host}, in.Proc > 0 && in.Host != ""
		case AdmissionTransition:
			return procOp{output: AdmissionTransitionResult{}, proc: in.Proc}, in.Proc > 0 && in.ClaimID != "" &&
				in.FromRevision != "" && (in.Helper == 0 || in.HelperHost != "")
		case AdmissionRelease:
			return procOp{output: AdmissionReleaseResult{}, proc: in.Proc}, in.Proc > 0 && in.ClaimID != "" && in.Revision != ""
		case AdmissionQuarantine:
			return procOp{output: AdmissionQuarantineResult{}, proc: in.Proc}, in.Proc > 0
		case ProcessDeath:
			return procOp{deathProc: in.Proc}, in.Proc > 0
		case Reboot:
			return procOp{rebootHost: in.Host}, in.Host != ""
		case PIDReuse, AdmissionCorruption, AdmissionClear, AdmissionReturn:
			return procOp{}, true
		case AdmissionSwap:
			return procOp{}, in.ClaimID != "" && in.Revision != "" && in.OwnerProc > 0 && in.OwnerHost != ""
		case AdmissionLegacy:
			return procOp{}, in.Host != "" && (in.Phase == PhaseCleanupUnsafe || in.Phase == PhaseParentOwned)
		}
		return procOp{}, false
	})
}

// CheckAdmission validates ops and checks them against AdmissionModel. See
// CheckLease for the meaning of the results; it panics on an invalid history.
func CheckAdmission(ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	if err := ValidateAdmissionHistory(ops); err != nil {
		panic("models: invalid admission history: " + err.Error())
	}
	model := AdmissionModel()
	return checkWitnessFirst(model, model, ops, timeout)
}

// DescribeAdmissionOperation renders one admission operation for the report.
func DescribeAdmissionOperation(input, output any) string {
	if text, ok := describeEnvironment(input); ok {
		return escape(text)
	}
	var call string
	switch in := input.(type) {
	case AdmissionAcquire:
		call = fmt.Sprintf("p%d Acquire()", in.Proc)
	case AdmissionTransition:
		call = fmt.Sprintf("p%d Transition(claim %s, rev %s, %s -> %s, helper p%d)",
			in.Proc, in.ClaimID, in.FromRevision, in.FromPhase, in.ToPhase, in.Helper)
	case AdmissionRelease:
		call = fmt.Sprintf("p%d Release(claim %s, rev %s, %s, helper %t)", in.Proc, in.ClaimID, in.Revision, in.Phase, in.HasHelper)
	case AdmissionQuarantine:
		call = fmt.Sprintf("p%d Quarantine(active.json)", in.Proc)
	case AdmissionCorruption:
		return "Corruption(active.json)"
	case AdmissionClear:
		return "OperatorClear(active.json)"
	case AdmissionSwap:
		return escape(fmt.Sprintf("Swap(active.json <- claim %s rev %s %s of p%d@%s)", in.ClaimID, in.Revision, in.Phase, in.OwnerProc, in.OwnerHost))
	case AdmissionReturn:
		return "OperatorReturn(active.json)"
	case AdmissionLegacy:
		return escape(fmt.Sprintf("Legacy(active.json, %s, written on %s)", in.Phase, in.Host))
	default:
		call = fmt.Sprintf("%T", input)
	}
	return escape(call + " -> " + describeAdmissionOutput(output))
}

func describeAdmissionOutput(output any) string {
	switch out := output.(type) {
	case Unknown:
		return "unknown"
	case AdmissionAcquireResult:
		names := [...]string{"?", "acquired", "active", "indeterminate", "contention", "corrupt"}
		if out.Kind == AdmissionAcquired {
			return fmt.Sprintf("acquired(claim %s, rev %s)", out.ClaimID, out.Revision)
		}
		if int(out.Kind) < len(names) {
			return names[out.Kind]
		}
	case AdmissionTransitionResult:
		if out.Kind == CASOK {
			return fmt.Sprintf("ok(rev %s)", out.Revision)
		}
		return describeCAS(out.Kind)
	case AdmissionReleaseResult:
		if out.Kind == CASOK {
			return "released"
		}
		return describeCAS(out.Kind)
	case AdmissionQuarantineResult:
		if out.Moved {
			return "moved"
		}
		return "refused"
	}
	return fmt.Sprintf("%+v", output)
}

func describeCAS(kind CASKind) string {
	switch kind {
	case CASOK:
		return "ok"
	case CASChanged:
		return "changed"
	case CASInvalid:
		return "invalid"
	}
	return fmt.Sprintf("CASKind(%d)", int(kind))
}

// DescribeAdmissionState renders one admission state for the report.
func DescribeAdmissionState(state any) string {
	s := state.(admissionState)
	switch s.slot {
	case slotEmpty:
		return "empty"
	case slotCorrupt:
		return "corrupt"
	}
	text := fmt.Sprintf("claim %s rev %s %s, owner p%d@%s %s", orUnknown(s.claimID), orUnknown(s.revision),
		s.phase, s.ownerProc, s.ownerHost, liveness(s.ownerAlive))
	if s.ownerBootGone {
		text += " (rebooted)"
	}
	if s.helperProc != 0 {
		text += fmt.Sprintf(", helper p%d@%s %s", s.helperProc, s.helperHost, liveness(s.helperAlive))
	}
	return escape(text)
}

func liveness(alive bool) string {
	if alive {
		return "alive"
	}
	return "dead"
}
