package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// AcquireWait retries a held lease with a doubling, capped pause on the
// injected Clock, and acquires once the holder is gone.
func TestAcquireWaitAcquiresWhenTheHolderGoes(t *testing.T) {
	w := newWorld(t)
	holder := leasetest.Identity(7)
	w.table.SetLive(holder)
	held := w.acquire(w.manager(holder)).Owner
	var pauses []time.Duration
	var waited []lease.AcquireResult
	w.clock.OnSleep(func(index int, d time.Duration) {
		pauses = append(pauses, d)
		if index == 5 {
			w.table.Kill(holder.PID)
		}
	})
	result, err := w.manager(leasetest.Identity(1)).AcquireWait(context.Background(), request,
		lease.WaitOptions{Timeout: time.Minute, BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
			Waiting: func(r lease.AcquireResult) { waited = append(waited, r) }})
	require.NoError(t, err)
	require.Len(t, waited, 5, "Waiting is called before each pause")
	require.Equal(t, lease.Held, waited[0].Kind)
	require.Equal(t, held.Generation, waited[0].Owner.Generation, "Waiting names the holder")
	require.Equal(t, lease.Acquired, result.Kind)
	require.Len(t, result.Reclaimed, 1)
	require.Equal(t, held.Generation, result.Reclaimed[0].Owner.Generation)
	require.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond,
		50 * time.Millisecond, 50 * time.Millisecond}, pauses)
}

func TestAcquireWaitEndings(t *testing.T) {
	holder := leasetest.Identity(7)
	setup := func(t *testing.T) (*world, *lease.Manager) {
		w := newWorld(t)
		w.table.SetLive(holder)
		w.acquire(w.manager(holder))
		return w, w.manager(leasetest.Identity(1))
	}
	t.Run("timeout returns the last Held result", func(t *testing.T) {
		w, m := setup(t)
		start := w.clock.Monotonic()
		result, err := m.AcquireWait(context.Background(), request, lease.WaitOptions{Timeout: time.Second})
		require.NoError(t, err)
		require.Equal(t, lease.Held, result.Kind)
		require.Equal(t, holder.PID, result.Owner.PID)
		require.Equal(t, time.Second, w.clock.Monotonic()-start, "pauses never run past the timeout")
	})
	t.Run("zero timeout is one attempt", func(t *testing.T) {
		w, m := setup(t)
		result, err := m.AcquireWait(context.Background(), request, lease.WaitOptions{})
		require.NoError(t, err)
		require.Equal(t, lease.Held, result.Kind)
		sleeps, _ := w.clock.Sleeps()
		require.Zero(t, sleeps)
	})
	t.Run("cancelled context returns the last result and ctx.Err", func(t *testing.T) {
		w, m := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		w.clock.OnSleep(func(index int, _ time.Duration) {
			if index == 3 {
				cancel()
			}
		})
		result, err := m.AcquireWait(ctx, request, lease.WaitOptions{Timeout: time.Hour})
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, lease.Held, result.Kind)
	})
	t.Run("a refusal for an operator returns at once", func(t *testing.T) {
		w := newWorld(t)
		initNamespace(t, w)
		w.write("receiver.lock/owner.json", "garbage")
		result, err := w.manager(leasetest.Identity(1)).AcquireWait(context.Background(), request,
			lease.WaitOptions{Timeout: time.Hour})
		require.NoError(t, err)
		require.Equal(t, lease.Refused, result.Kind)
		require.Equal(t, lease.RefusalCorruptOwner, result.Refusal.Reason)
		sleeps, _ := w.clock.Sleeps()
		require.Zero(t, sleeps)
	})
	t.Run("Retry decides which results are retried", func(t *testing.T) {
		w := newWorld(t)
		initNamespace(t, w)
		w.write("receiver.lock/owner.json", "garbage")
		m := w.manager(leasetest.Identity(1))
		retried := 0
		result, err := m.AcquireWait(context.Background(), request, lease.WaitOptions{Timeout: time.Second,
			Retry: func(r lease.AcquireResult) bool { retried++; return r.Kind == lease.Refused }})
		require.NoError(t, err)
		require.Equal(t, lease.RefusalCorruptOwner, result.Refusal.Reason, "the last result is returned")
		require.Greater(t, retried, 1)
		sleeps, _ := w.clock.Sleeps()
		require.Equal(t, retried-1, sleeps, "every retried result but the last, at the timeout, is slept on")

		_, m = setup(t)
		result, err = m.AcquireWait(context.Background(), request, lease.WaitOptions{Timeout: time.Hour,
			Retry: func(lease.AcquireResult) bool { return false }})
		require.NoError(t, err)
		require.Equal(t, lease.Held, result.Kind, "a Held result Retry declines ends the wait")
	})
	t.Run("a clock that stands still ends on the attempt bound", func(t *testing.T) {
		w := newWorld(t)
		w.table.SetLive(holder)
		w.acquire(w.manager(holder))
		m, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs,
			Clock: frozenClock{w.clock}, Inspector: w.table.As(leasetest.Identity(1)), IDs: w.ids})
		require.NoError(t, err)
		attempts := 0
		w.fs.After(func(op leasetest.Op, err error) {
			if err == nil && op.Name == "RenameNoReplace" && op.Paths[1] == w.path("receiver.lifecycle.guard.json") {
				attempts++
			}
		})
		result, err := m.AcquireWait(context.Background(), request,
			lease.WaitOptions{Timeout: 100 * time.Millisecond, BackoffMin: 10 * time.Millisecond})
		require.NoError(t, err)
		require.Equal(t, lease.Held, result.Kind)
		require.Equal(t, 12, attempts, "2 + Timeout/BackoffMin attempts")
	})
	t.Run("bad options", func(t *testing.T) {
		_, m := setup(t)
		for _, opts := range []lease.WaitOptions{{Timeout: -1}, {Timeout: time.Second, BackoffMin: -1},
			{Timeout: time.Second, BackoffMin: time.Second, BackoffMax: time.Millisecond}} {
			_, err := m.AcquireWait(context.Background(), request, opts)
			var requestErr *lease.RequestError
			require.ErrorAs(t, err, &requestErr, "%+v", opts)
		}
	})
}
