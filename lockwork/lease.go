package lockwork

import (
	"context"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// LeaseLock is leasekit's lease (package lease) as a Lock, on the namespace
// directory dir: run a workload with it to see the reference pass where a
// lock under test fails. Its fencing token is the lease epoch.
func LeaseLock(p *sim.Proc, dir string) Lock {
	m, err := lease.NewManager(lease.Config{Namespace: dir, RootID: "lockwork", FS: p.FS(), Clock: p.Clock(),
		Inspector: p.Inspector(), IDs: p.IDs(), GuardWait: leaseGuardWait})
	if err != nil {
		panic(err) // a constant configuration: a programming error
	}
	return &leaseLock{manager: m}
}

// leaseGuardWait bounds the lease's wait for its lifecycle guard: the
// workload retries an attempt itself, so one attempt need not wait long.
const leaseGuardWait = 100 * time.Millisecond

type leaseLock struct {
	manager    *lease.Manager
	generation string
}

func (l *leaseLock) TryLock() (bool, uint64, error) {
	result, err := l.manager.Acquire(context.Background(), lease.AcquireRequest{})
	if err != nil {
		return false, 0, err
	}
	switch result.Kind {
	case lease.Acquired:
		l.generation = result.Owner.Generation
		return true, result.Owner.Epoch, nil
	case lease.Held:
		return false, 0, nil
	}
	return false, 0, fmt.Errorf("%w: %s", ErrRefused, result.Refusal.Reason)
}

func (l *leaseLock) Unlock() error {
	result, err := l.manager.Release(context.Background(), l.generation)
	switch {
	case err != nil:
		return err
	case result.Kind == lease.Released:
		return nil
	case result.Kind == lease.NotOwner:
		return fmt.Errorf("%w: %s", ErrNotOwner, result.Why)
	}
	return fmt.Errorf("lease release refused: %s", result.Refusal.Reason) // nothing released: retried as unknown
}
