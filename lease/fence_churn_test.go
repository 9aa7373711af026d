package lease_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// A fencing check whose every read of owner.json changes under it (a
// co-tenant puts an identical copy in place between each lstat and its
// open) has no verdict: WithCurrentLease returns the read's error and runs
// nothing, and never a FenceError, since the holder may still hold the
// lease. (Catalog mutant lease-fence-churn-fenced: its campaign needs a
// long guided hunt.)
func TestFenceCheckThatKeepsChangingIsNoVerdict(t *testing.T) {
	w := newWorld(t)
	m := w.manager(leasetest.Identity(1))
	owned := w.acquire(m)
	require.Equal(t, lease.Acquired, owned.Kind)
	owner, data := w.path("receiver.lock", "owner.json"), w.read("receiver.lock/owner.json")
	swaps := 0
	w.fs.After(func(op leasetest.Op, err error) {
		if op.Name != "Lstat" || op.Paths[0] != owner || err != nil {
			return
		}
		swaps++
		copied := owner + ".copy"
		require.NoError(t, os.WriteFile(copied, []byte(data), 0o600))
		require.NoError(t, os.Rename(copied, owner))
	})
	ran := false
	err := m.WithCurrentLease(context.Background(), owned.Owner.Generation, func(context.Context, lease.Owner) error {
		ran = true
		return nil
	})
	w.fs.After(nil)
	require.Error(t, err)
	var fenced *lease.FenceError
	require.False(t, errors.As(err, &fenced), "a check with no verdict fenced the holder: %v", err)
	require.False(t, ran)
	require.Greater(t, swaps, 1, "every read was swapped under")
	t.Log(err)
}
