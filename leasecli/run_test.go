package leasecli_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
)

// runWait is a RunWait on the tree world's clock.
func (w *treeWorld) runWait(timeout time.Duration) leasecli.RunWait {
	return leasecli.RunWait{Timeout: timeout, BackoffMin: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond,
		Clock: w.clock, TreePoll: 10 * time.Millisecond, TreePollsMax: 100}
}

// AcquireRun waits, in the ways `leasereal run -w` does: a killed run's
// tree holds the lease until its job exits; a live holder's lease is taken
// once the holder is gone; -n is one attempt; a wait that ends returns the
// last Held result; a refusal an operator must resolve ends the wait at
// once.
func TestAcquireRunWaits(t *testing.T) {
	ctx := context.Background()
	t.Run("a killed run's tree, until its job exits", func(t *testing.T) {
		w := newTreeWorld(t)
		first, job := w.runWithJob(t)
		w.host.Kill(first)
		m, env := w.manager(t, w.wrapper(t))
		wait, waited := w.runWait(time.Second), 0
		wait.Waiting = func(result lease.AcquireResult, tree leasecli.TreeVerdict) {
			require.Equal(t, lease.Held, result.Kind)
			require.True(t, tree.Runs, "the wait names the tree")
			waited++
		}
		w.clock.OnSleep(func(index int, _ time.Duration) {
			if index == 3 {
				w.host.Kill(job)
			}
		})
		result, tree, err := leasecli.AcquireRun(ctx, m, lease.AcquireRequest{}, env, wait)
		require.NoError(t, err)
		require.Equal(t, lease.Acquired, result.Kind, tree.Why)
		require.Equal(t, 3, waited, "one Waiting call before each pause; the job exits in the third")
		require.Len(t, result.Reclaimed, 1, "the killed run's record, reclaimed once its tree was gone")
	})
	t.Run("-n is one attempt, and a wait that ends returns Held", func(t *testing.T) {
		w := newTreeWorld(t)
		w.runWithJob(t)
		m, env := w.manager(t, w.wrapper(t))
		result, _, err := leasecli.AcquireRun(ctx, m, lease.AcquireRequest{}, env, w.runWait(0))
		require.NoError(t, err)
		require.Equal(t, lease.Held, result.Kind)
		sleeps, _ := w.clock.Sleeps()
		require.Zero(t, sleeps)

		start := w.clock.Monotonic()
		result, _, err = leasecli.AcquireRun(ctx, m, lease.AcquireRequest{}, env, w.runWait(300*time.Millisecond))
		require.NoError(t, err)
		require.Equal(t, lease.Held, result.Kind)
		require.Equal(t, 300*time.Millisecond, w.clock.Monotonic()-start, "pauses never run past the wait")
	})
	t.Run("a refusal for an operator ends the wait at once", func(t *testing.T) {
		w := newTreeWorld(t)
		require.NoError(t, w.fsys.Mkdir(simNamespace, 0o700))
		require.NoError(t, w.fsys.Mkdir(simNamespace+"/receiver.lock", 0o700))
		f, err := w.fsys.OpenFile(simNamespace+"/receiver.lock/owner.json", lease.O_CREATE|lease.O_WRONLY, 0o600)
		require.NoError(t, err)
		_, err = f.Write([]byte("garbage"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		m, env := w.manager(t, w.wrapper(t))
		result, _, err := leasecli.AcquireRun(ctx, m, lease.AcquireRequest{}, env, w.runWait(time.Hour))
		require.NoError(t, err)
		require.Equal(t, lease.RefusalCorruptOwner, result.Refusal.Reason)
		sleeps, _ := w.clock.Sleeps()
		require.Zero(t, sleeps)
	})
}
