package models

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// The exclusive-lock model is the specification of any mutual-exclusion
// lock with optional fencing tokens: a PID file, flock, a mkdir lock,
// leasekit's lease. A user's lock needs no model of its own: its workload
// records LockAcquire and LockRelease calls (package lockwork does it) and
// ProcessDeath events, and CheckLock judges the history.
//
// State: the holder (a process incarnation, or none), whether the holder is
// alive, and the highest fencing epoch handed out. The rules:
//
//   - acquire answers Acquired only while the lock is free or its holder is
//     dead; a reported epoch (non-zero) is above every earlier one;
//   - acquire answers Held only while there is a holder, and, under
//     LockRules.DeadHolderFree, only while that holder is alive;
//   - acquire may answer Refused at any time (the lock could not decide; it
//     changes nothing);
//   - release answers Released only to the live holder, NotOwner only to
//     another process;
//   - ProcessDeath makes a holder dead; it never frees the lock by itself;
//   - an Unknown outcome (a crashed call) either had no effect or had its
//     legal effect.
//
// A live holder never loses the lock: expiry while the holder still runs
// (a paused holder, a clock step) is the hazard this model exists to catch.

// LockAcquire is one acquire attempt by process incarnation Proc.
type LockAcquire struct{ Proc int }

// LockRelease is one release by process incarnation Proc.
type LockRelease struct{ Proc int }

// LockAcquireKind is the outcome class of an acquire.
type LockAcquireKind int

const (
	// LockAcquired: the caller holds the lock now.
	LockAcquired LockAcquireKind = iota + 1
	// LockHeld: another process holds it.
	LockHeld
	// LockRefused: the lock could not decide (bad state, inspection
	// failed); nothing changed.
	LockRefused
)

func (k LockAcquireKind) String() string {
	switch k {
	case LockAcquired:
		return "acquired"
	case LockHeld:
		return "held"
	case LockRefused:
		return "refused"
	}
	return fmt.Sprintf("LockAcquireKind(%d)", int(k))
}

// LockAcquireResult is the output of a LockAcquire.
type LockAcquireResult struct {
	Kind LockAcquireKind
	// Epoch is the fencing token of an Acquired answer; 0 when the lock
	// has none (then monotonicity is not checked).
	Epoch uint64
}

// LockReleaseResult is the output of a LockRelease: Released is true when
// the lock said the caller released it, false for "not the owner".
type LockReleaseResult struct{ Released bool }

// LockRules are the properties a lock promises beyond mutual exclusion.
type LockRules struct {
	// DeadHolderFree: the lock detects a dead holder at once (PID liveness,
	// leasekit's lease), so an acquire that starts after the holder died
	// must not answer Held. A lock that waits out a timeout (mtime
	// staleness) leaves it false.
	DeadHolderFree bool
}

type lockState struct {
	holder int // 0: free
	alive  bool
	epoch  uint64
}

// LockModel returns the exclusive-lock model with the given rules.
func LockModel(rules LockRules) porcupine.Model {
	return stateSetModel[lockState]{
		step: func(s lockState, input, output any) []lockState { return lockStep(rules, s, input, output) },
		hash: func(s lockState) uint64 {
			h := newHasher()
			h.int(int64(s.holder))
			h.bool(s.alive)
			h.int(int64(s.epoch))
			return h.sum
		},
		describeOperation: func(input, output any) string { return escape(DescribeLockOperation(input, output)) },
		describeState:     func(s lockState) string { return escape(describeLockState(s)) },
	}.model()
}

func lockStep(rules LockRules, s lockState, input, output any) []lockState {
	switch in := input.(type) {
	case LockAcquire:
		return lockAcquireStep(rules, s, in.Proc, output)
	case LockRelease:
		return lockReleaseStep(s, in.Proc, output)
	case ProcessDeath:
		if s.holder == in.Proc {
			s.alive = false
		}
		return []lockState{s}
	case PIDReuse, Reboot:
		return []lockState{s} // annotations; a Reboot comes with ProcessDeath events
	}
	panic(fmt.Sprintf("models: lock model given %T", input))
}

// free reports whether an acquire may take the lock from state s.
func (s lockState) free() bool { return s.holder == 0 || !s.alive }

func lockAcquireStep(rules LockRules, s lockState, proc int, output any) []lockState {
	if _, unknown := output.(Unknown); unknown {
		next := []lockState{s}
		if s.free() {
			// Taken, with an epoch we never saw: at least one above.
			next = append(next, lockState{holder: proc, alive: true, epoch: s.epoch + 1})
		}
		return next
	}
	result := output.(LockAcquireResult)
	switch result.Kind {
	case LockAcquired:
		if !s.free() || (result.Epoch != 0 && result.Epoch <= s.epoch) {
			return nil
		}
		return []lockState{{holder: proc, alive: true, epoch: max(s.epoch, result.Epoch)}}
	case LockHeld:
		if s.holder == 0 || (rules.DeadHolderFree && !s.alive) {
			return nil
		}
		return []lockState{s}
	case LockRefused:
		return []lockState{s}
	}
	panic(fmt.Sprintf("models: lock acquire result %v", result.Kind))
}

func lockReleaseStep(s lockState, proc int, output any) []lockState {
	holds := s.holder == proc && s.alive
	released := lockState{epoch: s.epoch}
	if _, unknown := output.(Unknown); unknown {
		if holds {
			return []lockState{s, released}
		}
		return []lockState{s}
	}
	switch {
	case output.(LockReleaseResult).Released && holds:
		return []lockState{released}
	case !output.(LockReleaseResult).Released && !holds:
		return []lockState{s}
	}
	return nil
}

// CheckLock checks an exclusive-lock history (inputs LockAcquire,
// LockRelease and the environment events; outputs LockAcquireResult,
// LockReleaseResult or Unknown{}).
func CheckLock(rules LockRules, ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return check(LockModel(rules), ops, timeout)
}

// DescribeLockOperation renders one lock operation.
func DescribeLockOperation(input, output any) string {
	if text, ok := describeEnvironment(input); ok {
		return text
	}
	var call string
	switch in := input.(type) {
	case LockAcquire:
		call = fmt.Sprintf("p%d Acquire", in.Proc)
	case LockRelease:
		call = fmt.Sprintf("p%d Release", in.Proc)
	default:
		call = fmt.Sprintf("%T", input)
	}
	switch out := output.(type) {
	case Unknown:
		return call + " -> unknown"
	case LockAcquireResult:
		if out.Kind == LockAcquired && out.Epoch != 0 {
			return fmt.Sprintf("%s -> acquired epoch %d", call, out.Epoch)
		}
		return call + " -> " + out.Kind.String()
	case LockReleaseResult:
		if out.Released {
			return call + " -> released"
		}
		return call + " -> not owner"
	}
	return call
}

func describeLockState(s lockState) string {
	switch {
	case s.holder == 0:
		return fmt.Sprintf("free, epoch %d", s.epoch)
	case !s.alive:
		return fmt.Sprintf("held by dead p%d, epoch %d", s.holder, s.epoch)
	}
	return fmt.Sprintf("held by p%d, epoch %d", s.holder, s.epoch)
}
