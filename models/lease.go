package models

import (
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The receiver lease model (engine `lease`).
//
// One lease per Namespace; the history is partitioned by namespace, and
// environment events (ProcessDeath, Reboot, PIDReuse) go to every partition.
// Epochs are per namespace.
//
// State: empty | owned(owner) | corrupt, plus epochFloor, a lower bound that
// every later granted epoch must exceed (epochs strictly increase across
// grants, through release, reclaim, corruption and clearing).
//
// An owner is identified by the Session nonce its acquire presented (unique
// per acquire call). Its generation and epoch are bound when first observed:
// by the acquire's own result, or, for an acquire whose outcome was unknown,
// by a later held / inspect / release / fence result.
//
// Which outcome is legal in which state (the linearization point of the
// operation is the instant the state is read):
//
//	Acquire  acquired(gen, epoch)  empty, or owned by a dead owner (a reclaim);
//	                               epoch > epochFloor. Reclaimed is evidence
//	                               and is not checked (see LeaseAcquireResult).
//	         held(owner)           owned by a live owner whose Session (and
//	                               generation, epoch once bound) match.
//	         refused corrupt-owner         corrupt only.
//	         refused remote-owner          owned, owner on another host than
//	                                       the caller (alive or dead).
//	         refused unverifiable-owner    owned (alive or dead): the owner's
//	                                       liveness could not be decided.
//	         refused lifecycle-busy,
//	                 lifecycle-unverifiable  any state: the lifecycle guard,
//	                                       taken before the owner is read.
//	         refused corrupt-epoch          any state while the epoch file is
//	                                       corrupt (LeaseEpochCorruption until
//	                                       LeaseEpochRepair). A grant is still
//	                                       legal then if its epoch exceeds
//	                                       every earlier one.
//	Release  released              owned, and (Generation, Session) is the
//	                               owner's: the generation is a capability,
//	                               whoever presents it may release, through
//	                               a Manager of the owner's Root (several
//	                               roots share one namespace).
//	         not-owner             empty, or owned by someone else.
//	         refused corrupt-owner corrupt only; lifecycle-* in any state.
//	Inspect  empty | owned(gen, session, epoch) | corrupt, matching exactly.
//	WithCurrentLease
//	         ok                    owned by the caller: same Proc, Session,
//	                               Generation, Root. Anything else is the bug
//	                               "fenced op allowed".
//	         fenced                every other state.
//	         busy, unverifiable    any state (the guard).
//
// What the model does not check: that an acquire reports every reclaim. An
// acquire reclaims in one guarded step and installs in another; between the
// two another acquire may see the namespace empty. So a grant over a dead
// owner whose generation the result does not list is legal (another,
// still-open acquire reclaimed it), and a listed generation is not matched.
// Liveness (a dead owner's lease is eventually reclaimed) is checked by the
// simulator, not here.

// RefusalReason is why the lease engine refused to act.
type RefusalReason uint8

const (
	RefusalNone RefusalReason = iota
	RefusalRemoteOwner
	RefusalUnverifiableOwner
	RefusalCorruptOwner
	RefusalLifecycleBusy
	RefusalLifecycleUnverifiable
	RefusalCorruptEpoch
)

func (r RefusalReason) String() string {
	switch r {
	case RefusalNone:
		return "none"
	case RefusalRemoteOwner:
		return "remote-owner"
	case RefusalUnverifiableOwner:
		return "unverifiable-owner"
	case RefusalCorruptOwner:
		return "corrupt-owner"
	case RefusalLifecycleBusy:
		return "lifecycle-busy"
	case RefusalLifecycleUnverifiable:
		return "lifecycle-unverifiable"
	case RefusalCorruptEpoch:
		return "corrupt-epoch"
	}
	return fmt.Sprintf("RefusalReason(%d)", int(r))
}

// LeaseAcquire is the input of Manager.Acquire.
type LeaseAcquire struct {
	Namespace string
	Proc      int
	// Host is the caller's hostname (decides remote-owner, and which
	// owner a Reboot kills).
	Host string
	// Session is a nonce unique to this acquire call, passed to the engine
	// as the session ID it records in the owner file. It is how the model
	// tells which attempt holds the lease.
	Session string
	// Root is the caller's Manager RootID ("" and any other value are
	// roots like any other): a grant records it as the owner's root.
	Root string
}

// LeaseAcquireKind is the class of an acquire result.
type LeaseAcquireKind uint8

const (
	LeaseAcquired LeaseAcquireKind = iota + 1
	LeaseHeld
	LeaseAcquireRefused
)

// LeaseAcquireResult is the output of Manager.Acquire (or Unknown{}).
type LeaseAcquireResult struct {
	Kind LeaseAcquireKind
	// Generation and Epoch: the new owner's when Acquired, the current
	// owner's when Held (Epoch 0 = not reported).
	Generation string
	Epoch      int64
	// Session: the current owner's when Held.
	Session string
	// Reclaimed lists the generations this call quarantined, when Acquired.
	// Shown in reports; not checked (see the model comment).
	Reclaimed []string
	Reason    RefusalReason
}

// LeaseRelease is the input of Manager.Release. Generation is the
// capability presented; Session is the session of the acquire that
// produced that generation (the simulator always learns the two together:
// from its own acquire, or from a held / inspect result).
type LeaseRelease struct {
	Namespace  string
	Proc       int
	Generation string
	Session    string
	// Root is the caller's Manager RootID: only the owner's root may
	// release (several roots share one namespace).
	Root string
}

// LeaseReleaseKind is the class of a release result.
type LeaseReleaseKind uint8

const (
	LeaseReleased LeaseReleaseKind = iota + 1
	LeaseNotOwner
	LeaseReleaseRefused
)

// LeaseReleaseResult is the output of Manager.Release (or Unknown{}).
type LeaseReleaseResult struct {
	Kind LeaseReleaseKind
	// OwnerGeneration and OwnerSession: the current owner, when NotOwner
	// reports one ("" = none reported).
	OwnerGeneration string
	OwnerSession    string
	Reason          RefusalReason
}

// LeaseInspect is the input of Manager.Inspect.
type LeaseInspect struct {
	Namespace string
	Proc      int
}

// LeaseInspectKind is the class of an inspection.
type LeaseInspectKind uint8

const (
	LeaseEmpty LeaseInspectKind = iota + 1
	LeaseOwned
	LeaseCorrupt
)

// LeaseInspectResult is the output of Manager.Inspect.
type LeaseInspectResult struct {
	Kind       LeaseInspectKind
	Generation string
	Session    string
	Epoch      int64 // 0 = not reported
}

// LeaseWithCurrent is the input of Manager.WithCurrentLease: Proc runs a
// fenced operation holding (Generation, Session).
type LeaseWithCurrent struct {
	Namespace  string
	Proc       int
	Generation string
	Session    string
	// Root is the caller's Manager RootID: a Manager of another root is
	// fenced even in the owning process.
	Root string
}

// LeaseFenceKind is the outcome of WithCurrentLease.
type LeaseFenceKind uint8

const (
	// FenceOK: the guarded operation ran.
	FenceOK LeaseFenceKind = iota + 1
	// FenceFenced: the caller does not hold the current lease.
	FenceFenced
	// FenceBusy: the lifecycle guard was busy; nothing ran, retry.
	FenceBusy
	// FenceUnverifiable: the lifecycle guard could not be verified.
	FenceUnverifiable
)

// LeaseFenceResult is the output of WithCurrentLease (or Unknown{}).
type LeaseFenceResult struct {
	Kind LeaseFenceKind
}

// LeaseCorruption is the environment event "the owner record of Namespace
// was corrupted externally" (torn write, truncation, a hostile edit).
type LeaseCorruption struct {
	Namespace string
}

// LeaseClear is the environment event "an operator removed the lease of
// Namespace" (forced reclaim into quarantine, or repair of a corrupt one).
type LeaseClear struct {
	Namespace string
}

// LeaseReclaim is the environment event "a process moved the owner record
// of Namespace out of the way because its owner was dead" (an acquire's
// reclaim step: the lease is empty from here until some acquire installs
// a new owner). It is legal only while the owner is dead: a reclaim of a
// live owner is the two-owners bug; one of an empty lease is a no-op (a
// power loss may have undone an earlier, not yet durable, reclaim of the
// same record). Generation, when not "", is the
// reclaimed owner's generation and must match it. A reclaim of a corrupt
// record is also legal: a hostile corruption may strike between the
// engine's check of a dead owner and its move (the simulator checks the
// moved record itself).
//
// A simulator emits it at the instant of the move (Call == Return). A
// recorder that cannot see that instant (a real-OS stress run) emits one
// per generation the acquire reports reclaimed, with Call and Return set
// to the acquire's own Call and Return, on a lane of its own: porcupine
// then places the reclaim anywhere inside the acquire, and an Inspect that
// saw the lease empty in between is explained.
type LeaseReclaim struct {
	Namespace  string
	Generation string
}

// LeaseEpochCorruption is the environment event "the epoch file of
// Namespace was corrupted externally".
type LeaseEpochCorruption struct {
	Namespace string
}

// LeaseEpochRepair is the environment event "an operator repaired the epoch
// file of Namespace" (to a value no lower than any epoch issued).
type LeaseEpochRepair struct {
	Namespace string
}

type leaseStateKind uint8

const (
	leaseStateEmpty leaseStateKind = iota
	leaseStateOwned
	leaseStateCorrupt
)

// leaseState is one possible state of one namespace. Comparable.
type leaseState struct {
	kind       leaseStateKind
	epochFloor int64
	// epochCorrupt: the epoch file is corrupt (an environment event).
	epochCorrupt bool
	// The owner, when kind is leaseStateOwned.
	ownerProc       int
	ownerHost       string
	ownerRoot       string
	ownerSession    string
	ownerGeneration string // "" until bound
	ownerEpoch      int64  // 0 until bound
	ownerEpochMin   int64  // lower bound while ownerEpoch is unbound
	ownerAlive      bool
}

func (s leaseState) ownedBy(session, generation string) bool {
	return s.kind == leaseStateOwned && s.ownerSession == session &&
		(s.ownerGeneration == "" || s.ownerGeneration == generation)
}

// bind returns s with the owner's generation and epoch bound to what an
// output reported, or ok=false if they contradict what is already known.
func (s leaseState) bind(generation string, epoch int64) (leaseState, bool) {
	if generation == "" {
		return s, false
	}
	if s.ownerGeneration != "" && s.ownerGeneration != generation {
		return s, false
	}
	s.ownerGeneration = generation
	if epoch == 0 {
		return s, true
	}
	if s.ownerEpoch != 0 {
		return s, s.ownerEpoch == epoch
	}
	if epoch < s.ownerEpochMin {
		return s, false
	}
	// The owner is the latest grant, so its epoch is the floor.
	s.ownerEpoch, s.epochFloor = epoch, epoch
	return s, true
}

func (s leaseState) grant(in LeaseAcquire, generation string, epoch int64) leaseState {
	next := leaseState{
		kind: leaseStateOwned, ownerProc: in.Proc, ownerHost: in.Host, ownerRoot: in.Root, ownerSession: in.Session,
		ownerGeneration: generation, ownerAlive: true, epochCorrupt: s.epochCorrupt,
	}
	if epoch == 0 {
		next.ownerEpochMin = s.epochFloor + 1
		next.epochFloor = s.epochFloor + 1
	} else {
		next.ownerEpoch = epoch
		next.epochFloor = epoch
	}
	return next
}

func (s leaseState) emptied() leaseState {
	return leaseState{kind: leaseStateEmpty, epochFloor: s.epochFloor, epochCorrupt: s.epochCorrupt}
}

func leaseStep(s leaseState, input, output any) []leaseState {
	switch in := input.(type) {
	case LeaseAcquire:
		return leaseStepAcquire(s, in, output)
	case LeaseRelease:
		return leaseStepRelease(s, in, output)
	case LeaseInspect:
		return leaseStepInspect(s, output)
	case LeaseWithCurrent:
		return leaseStepWithCurrent(s, in, output)
	case ProcessDeath:
		if s.kind == leaseStateOwned && s.ownerProc == in.Proc {
			s.ownerAlive = false
		}
		return []leaseState{s}
	case Reboot:
		if s.kind == leaseStateOwned && s.ownerHost == in.Host {
			s.ownerAlive = false
		}
		return []leaseState{s}
	case PIDReuse:
		return []leaseState{s}
	case LeaseCorruption:
		return []leaseState{leaseState{kind: leaseStateCorrupt, epochFloor: s.epochFloor, epochCorrupt: s.epochCorrupt}}
	case LeaseClear:
		return []leaseState{s.emptied()}
	case LeaseReclaim:
		return leaseStepReclaim(s, in)
	case LeaseEpochCorruption:
		s.epochCorrupt = true
		return []leaseState{s}
	case LeaseEpochRepair:
		s.epochCorrupt = false
		return []leaseState{s}
	}
	panic(fmt.Sprintf("models: lease model got input %T", input))
}

// leaseStepReclaim empties a lease whose owner is dead (or whose record is
// corrupt); a reclaim of a live owner explains nothing. A reclaim of an
// empty lease is a no-op: a power loss can undo a reclaim that was not yet
// durable (its acquire had not answered), bringing the same dead owner's
// record back, which a later acquire reclaims again.
func leaseStepReclaim(s leaseState, in LeaseReclaim) []leaseState {
	switch {
	case s.kind == leaseStateEmpty:
		return []leaseState{s}
	case s.kind == leaseStateCorrupt:
		return []leaseState{s.emptied()}
	case s.kind == leaseStateOwned && !s.ownerAlive:
		if in.Generation != "" {
			if _, ok := s.bind(in.Generation, 0); !ok {
				return nil
			}
		}
		return []leaseState{s.emptied()}
	}
	return nil
}

func leaseStepAcquire(s leaseState, in LeaseAcquire, output any) []leaseState {
	grantable := s.kind == leaseStateEmpty || (s.kind == leaseStateOwned && !s.ownerAlive)
	out, known := output.(LeaseAcquireResult)
	if !known {
		mustUnknown(output)
		next := []leaseState{s}
		if grantable {
			next = append(next, s.grant(in, "", 0))
		}
		if s.kind == leaseStateOwned && !s.ownerAlive {
			next = append(next, s.emptied()) // reclaimed, then cut short
		}
		return next
	}
	switch out.Kind {
	case LeaseAcquired:
		if !grantable || out.Generation == "" || out.Epoch <= s.epochFloor {
			return nil
		}
		return []leaseState{s.grant(in, out.Generation, out.Epoch)}
	case LeaseHeld:
		if s.kind != leaseStateOwned || !s.ownerAlive || s.ownerSession != out.Session {
			return nil
		}
		if next, ok := s.bind(out.Generation, out.Epoch); ok {
			return []leaseState{next}
		}
		return nil
	case LeaseAcquireRefused:
		if acquireRefusalLegal(s, in, out.Reason) {
			return []leaseState{s}
		}
		return nil
	}
	return nil
}

func acquireRefusalLegal(s leaseState, in LeaseAcquire, reason RefusalReason) bool {
	switch reason {
	case RefusalCorruptOwner:
		return s.kind == leaseStateCorrupt
	case RefusalRemoteOwner:
		return s.kind == leaseStateOwned && s.ownerHost != in.Host
	case RefusalUnverifiableOwner:
		return s.kind == leaseStateOwned
	case RefusalCorruptEpoch:
		return s.epochCorrupt
	case RefusalLifecycleBusy, RefusalLifecycleUnverifiable:
		return true
	}
	return false
}

func guardRefusal(s leaseState, reason RefusalReason) bool {
	switch reason {
	case RefusalCorruptOwner:
		return s.kind == leaseStateCorrupt
	case RefusalLifecycleBusy, RefusalLifecycleUnverifiable:
		return true
	}
	return false
}

func leaseStepRelease(s leaseState, in LeaseRelease, output any) []leaseState {
	capable := s.ownedBy(in.Session, in.Generation) && s.ownerRoot == in.Root
	out, known := output.(LeaseReleaseResult)
	if !known {
		mustUnknown(output)
		if capable {
			return []leaseState{s, s.emptied()}
		}
		return []leaseState{s}
	}
	switch out.Kind {
	case LeaseReleased:
		if capable {
			return []leaseState{s.emptied()}
		}
		return nil
	case LeaseNotOwner:
		if s.kind == leaseStateCorrupt || capable {
			return nil
		}
		if out.OwnerSession == "" {
			return []leaseState{s}
		}
		if s.kind != leaseStateOwned || s.ownerSession != out.OwnerSession {
			return nil
		}
		if next, ok := s.bind(out.OwnerGeneration, 0); ok {
			return []leaseState{next}
		}
		return nil
	case LeaseReleaseRefused:
		if guardRefusal(s, out.Reason) {
			return []leaseState{s}
		}
		return nil
	}
	return nil
}

func leaseStepInspect(s leaseState, output any) []leaseState {
	out, known := output.(LeaseInspectResult)
	if !known {
		mustUnknown(output)
		return []leaseState{s}
	}
	switch out.Kind {
	case LeaseEmpty:
		if s.kind == leaseStateEmpty {
			return []leaseState{s}
		}
	case LeaseCorrupt:
		if s.kind == leaseStateCorrupt {
			return []leaseState{s}
		}
	case LeaseOwned:
		if s.kind != leaseStateOwned || s.ownerSession != out.Session {
			return nil
		}
		if next, ok := s.bind(out.Generation, out.Epoch); ok {
			return []leaseState{next}
		}
	}
	return nil
}

func leaseStepWithCurrent(s leaseState, in LeaseWithCurrent, output any) []leaseState {
	current := s.ownedBy(in.Session, in.Generation) && s.ownerProc == in.Proc && s.ownerRoot == in.Root
	out, known := output.(LeaseFenceResult)
	if !known {
		mustUnknown(output)
		return []leaseState{s}
	}
	switch out.Kind {
	case FenceOK:
		if !current {
			return nil
		}
		if next, ok := s.bind(in.Generation, 0); ok {
			return []leaseState{next}
		}
	case FenceFenced:
		if !current {
			return []leaseState{s}
		}
	case FenceBusy, FenceUnverifiable:
		return []leaseState{s}
	}
	return nil
}

// mustUnknown panics on an output of the wrong type: the history was
// recorded wrongly, and guessing would give a silent wrong verdict.
func mustUnknown(output any) {
	if _, ok := output.(Unknown); !ok {
		panic(fmt.Sprintf("models: output %T does not match its input", output))
	}
}

func leaseHash(s leaseState) uint64 {
	h := newHasher()
	h.int(int64(s.kind))
	h.int(s.epochFloor)
	h.bool(s.epochCorrupt)
	h.int(int64(s.ownerProc))
	h.string(s.ownerSession)
	h.string(s.ownerRoot)
	h.string(s.ownerGeneration)
	h.int(s.ownerEpoch)
	h.bool(s.ownerAlive)
	return h.sum
}

// LeaseModel returns the receiver lease model, partitioned by namespace.
func LeaseModel() porcupine.Model {
	return leaseStateSetModel().model()
}

// LeaseNondeterministicModel is LeaseModel before the power-set
// construction: its states are single lease states. realstress searches
// them exhaustively to carry a segment's exact end states to the next.
func LeaseNondeterministicModel() porcupine.NondeterministicModel {
	return leaseStateSetModel().nondeterministic()
}

func leaseStateSetModel() stateSetModel[leaseState] {
	return stateSetModel[leaseState]{
		partition:         leasePartition,
		step:              leaseStep,
		hash:              leaseHash,
		describeOperation: DescribeLeaseOperation,
		describeState:     func(s leaseState) string { return DescribeLeaseState(s) },
	}
}

// ValidateLeaseHistory checks the history contract (see the package
// comment) for a lease history.
func ValidateLeaseHistory(ops []porcupine.Operation) error {
	return validateHistory(ops, func(input any) (procOp, bool) {
		switch in := input.(type) {
		case LeaseAcquire:
			return procOp{output: LeaseAcquireResult{}, proc: in.Proc, host: in.Host}, in.Proc > 0 && in.Host != "" && in.Session != ""
		case LeaseRelease:
			return procOp{output: LeaseReleaseResult{}, proc: in.Proc}, in.Proc > 0 && in.Generation != "" && in.Session != ""
		case LeaseInspect:
			return procOp{output: LeaseInspectResult{}, proc: in.Proc}, in.Proc > 0
		case LeaseWithCurrent:
			return procOp{output: LeaseFenceResult{}, proc: in.Proc}, in.Proc > 0 && in.Generation != "" && in.Session != ""
		case ProcessDeath:
			return procOp{deathProc: in.Proc}, in.Proc > 0
		case Reboot:
			return procOp{rebootHost: in.Host}, in.Host != ""
		case PIDReuse, LeaseCorruption, LeaseClear, LeaseEpochCorruption, LeaseEpochRepair:
			return procOp{}, true
		case LeaseReclaim:
			return procOp{window: true}, in.Namespace != ""
		}
		return procOp{}, false
	})
}

// CheckLease validates ops and checks them against LeaseModel. Unknown
// means the check timed out: treat it as a failure, never a pass. The
// LinearizationInfo is filled only when the result is Illegal. It panics on
// a history that breaks the contract (a recording bug in the harness).
func CheckLease(ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	if err := ValidateLeaseHistory(ops); err != nil {
		panic("models: invalid lease history: " + err.Error())
	}
	return check(LeaseModel(), ops, timeout)
}

// DescribeLeaseOperation renders one lease operation for the HTML report.
func DescribeLeaseOperation(input, output any) string {
	if text, ok := describeEnvironment(input); ok {
		return escape(text)
	}
	var call string
	switch in := input.(type) {
	case LeaseAcquire:
		call = fmt.Sprintf("p%d Acquire(%s, session %s)", in.Proc, in.Namespace, in.Session)
	case LeaseRelease:
		call = fmt.Sprintf("p%d Release(%s, gen %s, session %s)", in.Proc, in.Namespace, in.Generation, in.Session)
	case LeaseInspect:
		call = fmt.Sprintf("p%d Inspect(%s)", in.Proc, in.Namespace)
	case LeaseWithCurrent:
		call = fmt.Sprintf("p%d WithCurrentLease(%s, gen %s, session %s)", in.Proc, in.Namespace, in.Generation, in.Session)
	case LeaseCorruption:
		return escape(fmt.Sprintf("Corruption(%s)", in.Namespace))
	case LeaseClear:
		return escape(fmt.Sprintf("OperatorClear(%s)", in.Namespace))
	case LeaseReclaim:
		return escape(fmt.Sprintf("Reclaim(%s, gen %s)", in.Namespace, orUnknown(in.Generation)))
	case LeaseEpochCorruption:
		return escape(fmt.Sprintf("EpochCorruption(%s)", in.Namespace))
	case LeaseEpochRepair:
		return escape(fmt.Sprintf("EpochRepair(%s)", in.Namespace))
	default:
		call = fmt.Sprintf("%T", input)
	}
	return escape(call + " -> " + describeLeaseOutput(output))
}

func describeLeaseOutput(output any) string {
	switch out := output.(type) {
	case Unknown:
		return "unknown"
	case LeaseAcquireResult:
		switch out.Kind {
		case LeaseAcquired:
			text := fmt.Sprintf("acquired(gen %s, epoch %d", out.Generation, out.Epoch)
			if len(out.Reclaimed) > 0 {
				text += ", reclaimed " + strings.Join(out.Reclaimed, " ")
			}
			return text + ")"
		case LeaseHeld:
			return fmt.Sprintf("held(gen %s, session %s, epoch %d)", out.Generation, out.Session, out.Epoch)
		case LeaseAcquireRefused:
			return "refused(" + out.Reason.String() + ")"
		}
	case LeaseReleaseResult:
		switch out.Kind {
		case LeaseReleased:
			return "released"
		case LeaseNotOwner:
			if out.OwnerSession != "" {
				return fmt.Sprintf("not-owner(owner gen %s, session %s)", out.OwnerGeneration, out.OwnerSession)
			}
			return "not-owner"
		case LeaseReleaseRefused:
			return "refused(" + out.Reason.String() + ")"
		}
	case LeaseInspectResult:
		switch out.Kind {
		case LeaseEmpty:
			return "empty"
		case LeaseCorrupt:
			return "corrupt"
		case LeaseOwned:
			return fmt.Sprintf("owned(gen %s, session %s, epoch %d)", out.Generation, out.Session, out.Epoch)
		}
	case LeaseFenceResult:
		switch out.Kind {
		case FenceOK:
			return "ok"
		case FenceFenced:
			return "fenced"
		case FenceBusy:
			return "busy"
		case FenceUnverifiable:
			return "unverifiable"
		}
	}
	return fmt.Sprintf("%+v", output)
}

// DescribeLeaseState renders one lease state for the HTML report.
func DescribeLeaseState(state any) string {
	s := state.(leaseState)
	var text string
	switch s.kind {
	case leaseStateEmpty:
		text = fmt.Sprintf("empty (epoch > %d)", s.epochFloor)
	case leaseStateCorrupt:
		text = fmt.Sprintf("corrupt (epoch > %d)", s.epochFloor)
	default:
		epoch := fmt.Sprint(s.ownerEpoch)
		if s.ownerEpoch == 0 {
			epoch = fmt.Sprintf("?>=%d", s.ownerEpochMin)
		}
		text = fmt.Sprintf("owned(p%d@%s %s, session %s, gen %s, epoch %s)",
			s.ownerProc, s.ownerHost, liveness(s.ownerAlive), s.ownerSession, orUnknown(s.ownerGeneration), epoch)
	}
	if s.epochCorrupt {
		text += " [epoch file corrupt]"
	}
	return escape(text)
}
