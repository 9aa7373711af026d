package lease

import "fmt"

// AcquireKind is the outcome class of Manager.Acquire.
type AcquireKind int

const (
	// Acquired: this call published a new owner record; Owner is it.
	Acquired AcquireKind = iota + 1
	// Held: a live process already holds the lease; Owner is its record.
	// Nothing was changed on disk.
	Held
	// Refused: the call could not decide safely; Refusal says why.
	Refused
)

func (k AcquireKind) String() string {
	switch k {
	case Acquired:
		return "acquired"
	case Held:
		return "held"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("AcquireKind(%d)", int(k))
}

// AcquireResult is what Acquire decided.
type AcquireResult struct {
	Kind AcquireKind
	// Owner is the new owner (Acquired) or the live holder (Held).
	Owner Owner
	// Reclaimed lists every stale owner this call moved into quarantine, in
	// order, even when the call ends Refused or Held afterwards: the moves
	// happened and their records are evidence.
	Reclaimed []Reclaim
	// Refusal is set when Kind is Refused.
	Refusal Refusal
}

// Reclaim reports one stale owner moved into quarantine.
type Reclaim struct {
	// Owner is the reclaimed record, as it was on disk.
	Owner Owner
	// QuarantinePath is the directory it now lives in (the former
	// receiver.lock, owner.json inside).
	QuarantinePath string
	// Reason is one of the Stale* constants: why the owner was provably gone.
	Reason string
}

// RefusalReason says why an operation refused to act.
type RefusalReason string

// Refusal reasons. The first five are the original's; RefusalCorruptEpoch
// (new with the epoch counter) and RefusalUnsafeNamespace are the port's own.
const (
	// RefusalRemoteOwner: the owner record names another host; it can be
	// neither inspected nor reclaimed from here.
	RefusalRemoteOwner RefusalReason = "remote-owner"
	// RefusalUnverifiableOwner: the owner's liveness cannot be decided (the
	// inspection failed, another PID namespace, another user's process).
	RefusalUnverifiableOwner RefusalReason = "unverifiable-owner"
	// RefusalCorruptOwner: receiver.lock or owner.json is not a valid owner.
	RefusalCorruptOwner RefusalReason = "corrupt-owner"
	// RefusalLifecycleBusy: another live process held the lifecycle guard (or
	// a live reclaim intent existed) for the whole wait. Retrying may help.
	RefusalLifecycleBusy RefusalReason = "lifecycle-busy"
	// RefusalLifecycleUnverifiable: the lifecycle guard or a reclaim intent
	// is corrupt, remote or belongs to a process that cannot be inspected.
	RefusalLifecycleUnverifiable RefusalReason = "lifecycle-unverifiable"
	// RefusalCorruptEpoch: the epoch counter file is not valid, so no new
	// epoch can be proven larger than every earlier one.
	RefusalCorruptEpoch RefusalReason = "corrupt-epoch"
	// RefusalUnsafeNamespace: the namespace (or quarantine/ or
	// lifecycle-reclaims/) is a symlink, writable by group or others, or
	// owned by another uid: another user could plant or swap records in it.
	RefusalUnsafeNamespace RefusalReason = "unsafe-namespace"
)

// HumanState names a state the engine will never resolve by itself: an
// operator must look at the evidence and act (for example, move the named
// file into quarantine/ by hand). Empty when waiting or retrying may help.
type HumanState string

// The human-needed states.
const (
	HumanNone HumanState = ""
	// HumanCorruptOwner: owner.json exists but is not a valid owner record
	// (truncated, unknown field, unsupported schema, not a regular file).
	HumanCorruptOwner HumanState = "corrupt-owner-record"
	// HumanEmptyReceiverLock: receiver.lock exists without owner.json.
	HumanEmptyReceiverLock HumanState = "empty-receiver-lock"
	// HumanReceiverLockNotDirectory: a symlink, plain file or other non-
	// directory sits at receiver.lock.
	HumanReceiverLockNotDirectory HumanState = "receiver-lock-not-directory"
	// HumanCorruptGuard: the lifecycle guard file is not a valid guard.
	HumanCorruptGuard HumanState = "corrupt-lifecycle-guard"
	// HumanCorruptIntent: a reclaim intent file is not a valid intent.
	HumanCorruptIntent HumanState = "corrupt-reclaim-intent"
	// HumanRemoteRecord: a record names another host. If that host is gone
	// for good, or is this container rebuilt under a new hostname, only an
	// operator can know it.
	HumanRemoteRecord HumanState = "remote-record"
	// HumanForeignNamespace: a record names another PID namespace (another
	// container sharing this volume); it cannot be inspected from here.
	HumanForeignNamespace HumanState = "foreign-pid-namespace"
	// HumanCorruptEpoch: the epoch counter file is not valid.
	HumanCorruptEpoch HumanState = "corrupt-epoch-file"
	// HumanUnsafeNamespace: see RefusalUnsafeNamespace.
	HumanUnsafeNamespace HumanState = "unsafe-namespace"
	// HumanForeignFile: receiver.lock or owner.json belongs to another uid;
	// only that uid (or root) could have written it.
	HumanForeignFile HumanState = "foreign-uid-file"
)

// Refusal says why an operation refused to act. Every refusal leaves the
// on-disk state as it was (apart from reclaims reported beside it).
type Refusal struct {
	Reason RefusalReason
	// Diagnostic is a human-readable account naming the file and problem.
	Diagnostic string
	// Human names the state an operator must resolve; HumanNone when a
	// retry may succeed.
	Human HumanState
}

// IsZero reports whether r is the zero Refusal (no refusal).
func (r Refusal) IsZero() bool { return r.Reason == "" }

// Err returns r as a *RefusalError.
func (r Refusal) Err() error { return &RefusalError{Refusal: r} }

func (r Refusal) String() string {
	if r.Human != HumanNone {
		return fmt.Sprintf("%s (%s; needs an operator): %s", r.Reason, r.Human, r.Diagnostic)
	}
	return fmt.Sprintf("%s: %s", r.Reason, r.Diagnostic)
}

// RefusalError is a Refusal used as an error.
type RefusalError struct{ Refusal Refusal }

func (e *RefusalError) Error() string { return "receiver lease refused: " + e.Refusal.String() }

// ReleaseKind is the outcome class of Manager.Release.
type ReleaseKind int

const (
	// Released: the owner record with that generation was removed.
	Released ReleaseKind = iota + 1
	// NotOwner: the generation is not the current one; nothing changed.
	NotOwner
	// ReleaseRefused: the state could not be decided; Refusal says why.
	ReleaseRefused
)

func (k ReleaseKind) String() string {
	switch k {
	case Released:
		return "released"
	case NotOwner:
		return "not-owner"
	case ReleaseRefused:
		return "refused"
	}
	return fmt.Sprintf("ReleaseKind(%d)", int(k))
}

// ReleaseResult is what Release decided.
type ReleaseResult struct {
	Kind ReleaseKind
	// Owner is the current owner when Kind is NotOwner and one exists.
	Owner *Owner
	// Why says why the caller is not the owner (NotOwner).
	Why string
	// Refusal is set when Kind is ReleaseRefused.
	Refusal Refusal
}

// ProjectionKind is the outcome class of Manager.Inspect.
type ProjectionKind int

const (
	// Empty: no receiver.lock exists.
	Empty ProjectionKind = iota + 1
	// Owned: receiver.lock holds a valid owner record.
	Owned
	// Corrupt: receiver.lock exists but is not a valid lease.
	Corrupt
)

func (k ProjectionKind) String() string {
	switch k {
	case Empty:
		return "empty"
	case Owned:
		return "owned"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("ProjectionKind(%d)", int(k))
}

// Projection is the on-disk lease as read, without judging liveness.
type Projection struct {
	Kind  ProjectionKind
	Owner Owner
	// Diagnostic and Human are set when Kind is Corrupt.
	Diagnostic string
	Human      HumanState
	// Blockers lists every entry that makes mutating calls refuse until
	// an operator resolves it with ForceReclaim (a Corrupt receiver.lock
	// among them). Empty when nothing needs an operator.
	Blockers []Blocker
}

// FenceError says the presented generation is not the current lease of this
// process: the caller lost the lease (released, reclaimed, replaced, or
// never held it from this process). Retrying will not help.
type FenceError struct {
	Generation string
	// Why says which check failed.
	Why string
}

func (e *FenceError) Error() string {
	return fmt.Sprintf("receiver lease generation %s is not current: %s", e.Generation, e.Why)
}

// BusyError says the lifecycle guard stayed busy for the whole wait. The
// lease may still be the caller's: retry.
type BusyError struct{ Refusal Refusal }

func (e *BusyError) Error() string { return "receiver lease lifecycle busy: " + e.Refusal.Diagnostic }

// UnverifiableError says the lifecycle guard or a reclaim intent could not
// be verified (corrupt, remote, uninspectable). Refusal.Human names what an
// operator must resolve.
type UnverifiableError struct{ Refusal Refusal }

func (e *UnverifiableError) Error() string {
	return "receiver lease lifecycle unverifiable: " + e.Refusal.String()
}

// GuardLostError says the lifecycle guard this call held was replaced or
// removed by someone else before the call released it. The protocol never
// does that to a live holder, so it means an operator or a foreign tool
// intervened; the operation inside the guard did run.
type GuardLostError struct {
	Path string
	// Why says what was found instead.
	Why string
}

func (e *GuardLostError) Error() string {
	return fmt.Sprintf("%s: the lifecycle guard held by this call was lost: %s", e.Path, e.Why)
}
