package lease

import (
	"context"
	"fmt"

	"github.com/leasekit/leasekit/internal/statefile"
)

// WithCurrentLease runs fn while holding the lifecycle guard, only if the
// lease's current generation is generation, its rootId is this Manager's,
// and its owner is exactly the calling process (IsSameProcess). While fn
// runs no other Manager can acquire, release or reclaim the lease. fn must
// not call this Manager's Acquire, Release or WithCurrentLease (the guard
// is not re-entrant: such a call waits and ends busy).
//
// Errors, each its own type:
//   - *FenceError: the generation is not current for this process (lost
//     the lease); fn did not run.
//   - *BusyError: the guard stayed busy for the whole wait; retry.
//   - *UnverifiableError: the guard or an intent cannot be verified.
//   - *RefusalError: the namespace is unsafe (RefusalUnsafeNamespace).
//   - fn's error, returned as is (or joined with a guard-release failure,
//     still reachable through errors.Is/As).
func (m *Manager) WithCurrentLease(ctx context.Context, generation string, fn func(ctx context.Context, owner Owner) error) error {
	if err := checkGeneration(generation); err != nil {
		return err
	}
	c, unsafe, err := m.begin(ctx)
	if err != nil {
		return err
	}
	if !unsafe.IsZero() {
		return unsafe.Err()
	}
	refusal, err := m.withGuard(c, func() error {
		owner, fence, err := m.currentOwner(c, generation)
		if err != nil {
			return err
		}
		if fence != nil {
			return fence
		}
		return fn(c.ctx, owner)
	})
	switch refusal.Reason {
	case "":
		return err
	case RefusalLifecycleBusy:
		return statefile.JoinErrors(&BusyError{Refusal: refusal}, err)
	case RefusalLifecycleUnverifiable:
		return statefile.JoinErrors(&UnverifiableError{Refusal: refusal}, err)
	}
	panic(fmt.Sprintf("lease: guard refused with %q", refusal.Reason))
}

// currentOwner is the fencing check of WithCurrentLease.
func (m *Manager) currentOwner(c *call, generation string) (Owner, *FenceError, error) {
	projection, _, err := m.project(c.uid)
	if err != nil {
		return Owner{}, nil, err
	}
	fence := func(why string) (Owner, *FenceError, error) {
		return Owner{}, &FenceError{Generation: generation, Why: why}, nil
	}
	switch projection.Kind {
	case Empty:
		return fence("no lease is held")
	case Corrupt:
		return fence("the lease is corrupt: " + projection.Diagnostic)
	}
	owner := projection.Owner
	switch {
	case owner.Generation != generation:
		return fence("the lease now has generation " + owner.Generation)
	case owner.RootID != m.rootID:
		return fence(fmt.Sprintf("the lease belongs to root %q, not %q", owner.RootID, m.rootID))
	case !sameProcess(owner.Identity(), owner.legacy(), c.current):
		return fence(fmt.Sprintf("the lease is owned by PID %d on %q, not by this process", owner.PID, owner.Hostname))
	}
	return owner, nil, nil
}
