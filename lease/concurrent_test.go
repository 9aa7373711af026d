package lease_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestConcurrentProcessesExcludeEachOther runs several simulated processes
// as goroutines on one real directory (real rename, link and fsync races):
// each acquires, runs inside WithCurrentLease, and releases. At most one may
// ever be inside fn; everything must end clean. The second variant starts
// from a stale guard, so the processes also race through reclaim intents.
func TestConcurrentProcessesExcludeEachOther(t *testing.T) {
	for _, staleGuard := range []bool{false, true} {
		name := "clean start"
		if staleGuard {
			name = "stale guard at start"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			if staleGuard {
				w.write("receiver.lifecycle.guard.json", guardJSON(leasetest.Identity(77), "dead-holder"))
			}
			const processes, rounds = 4, 15
			var inside, acquired atomic.Int32
			var wg sync.WaitGroup
			errs := make(chan error, processes*rounds)
			for process := range processes {
				m := w.managerWith(leasetest.Identity(10+process), time.Hour)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range rounds {
						if err := cycle(m, &inside, &acquired); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			require.Positive(t, acquired.Load())
			require.Equal(t, []string{"lifecycle-reclaims", "quarantine", "receiver.epoch.issued.json", "receiver.epoch.json"}, w.names())
			require.Empty(t, w.names("lifecycle-reclaims"))
			for _, entry := range w.names("quarantine") {
				require.True(t, strings.HasPrefix(entry, "lifecycle."), "only guards are quarantined: %s", entry)
			}
			if staleGuard {
				require.NotEmpty(t, w.names("quarantine"), "the stale guard is kept as evidence")
			}
		})
	}
}

// cycle is one acquire → use → release round of one process.
func cycle(m *lease.Manager, inside, acquired *atomic.Int32) error {
	ctx := context.Background()
	result, err := m.Acquire(ctx, request)
	if err != nil {
		return err
	}
	switch result.Kind {
	case lease.Held:
		return nil
	case lease.Refused:
		if result.Refusal.Reason != lease.RefusalLifecycleBusy {
			return errors.New("unexpected refusal: " + result.Refusal.String())
		}
		return nil
	}
	acquired.Add(1)
	err = m.WithCurrentLease(ctx, result.Owner.Generation, func(context.Context, lease.Owner) error {
		if inside.Add(1) != 1 {
			return errors.New("two processes inside WithCurrentLease at once")
		}
		inside.Add(-1)
		return nil
	})
	var busyErr *lease.BusyError
	if err != nil && !errors.As(err, &busyErr) {
		return err
	}
	for attempt := 0; attempt < 100; attempt++ {
		released, err := m.Release(ctx, result.Owner.Generation)
		if err != nil {
			return err
		}
		if released.Kind == lease.Released {
			return nil
		}
		if released.Kind != lease.ReleaseRefused || released.Refusal.Reason != lease.RefusalLifecycleBusy {
			return errors.New("release by the owner: " + released.Kind.String() + " " + released.Why)
		}
	}
	return errors.New("release stayed busy for 100 attempts")
}
