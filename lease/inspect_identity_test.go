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

// uidReporter is an Inspector whose Current fails (EACCES on /proc/self,
// or darwin's fail-closed inspector) but which knows the caller's uid.
type uidReporter struct {
	lease.Inspector
	uid uint32
}

func (u uidReporter) CallerUID() (uint32, error) { return u.uid, nil }

// Issue 19, item 10: Inspect reads files and judges no liveness, so it
// must not need the caller's identity. Before, it failed whenever
// Inspector.Current did, which on darwin is always.
func TestInspectNeedsNoCallerIdentity(t *testing.T) {
	for _, withUID := range []bool{false, true} {
		name := "namespace uid"
		if withUID {
			name = "CallerUID"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			holder := leasetest.Identity(1)
			owner := w.acquire(w.manager(holder)).Owner
			w.write("receiver.lifecycle.guard.json", "garbage")

			blind := leasetest.NewInspector(leasetest.Identity(2))
			blind.FailCurrent(&os.PathError{Op: "open", Path: "/proc/self/stat", Err: os.ErrPermission})
			var inspector lease.Inspector = blind
			if withUID {
				inspector = uidReporter{Inspector: blind, uid: uint32(leasetest.UID)}
			}
			m, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs, Clock: w.clock,
				Inspector: inspector, IDs: w.ids})
			require.NoError(t, err)
			projection, err := m.Inspect(context.Background())
			require.NoError(t, err)
			require.Equal(t, lease.Owned, projection.Kind)
			require.Equal(t, owner, projection.Owner)
			require.Len(t, projection.Blockers, 1)
			require.Equal(t, lease.BlockerGuard, projection.Blockers[0].Kind)

			_, err = m.Acquire(context.Background(), request)
			require.ErrorIs(t, err, os.ErrPermission, "mutating calls still need the caller's identity")
		})
	}
	t.Run("foreign uid still reads as foreign", func(t *testing.T) {
		w := newWorld(t)
		w.acquire(w.manager(leasetest.Identity(1)))
		blind := leasetest.NewInspector(leasetest.Identity(2))
		blind.FailCurrent(errors.New("no /proc"))
		m, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs, Clock: w.clock,
			Inspector: uidReporter{Inspector: blind, uid: uint32(leasetest.UID) + 1}, IDs: w.ids})
		require.NoError(t, err)
		_, err = m.Inspect(context.Background())
		var refusal *lease.RefusalError
		require.ErrorAs(t, err, &refusal, "a namespace of another uid is refused, as with a known identity")
		require.Equal(t, lease.RefusalUnsafeNamespace, refusal.Refusal.Reason)
	})
	t.Run("missing namespace is empty", func(t *testing.T) {
		w := newWorld(t)
		blind := leasetest.NewInspector(leasetest.Identity(2))
		blind.FailCurrent(errors.New("no /proc"))
		m, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs, Clock: w.clock,
			Inspector: blind, IDs: w.ids})
		require.NoError(t, err)
		projection, err := m.Inspect(context.Background())
		require.NoError(t, err)
		require.Equal(t, lease.Empty, projection.Kind)
		_, statErr := os.Lstat(w.ns)
		require.ErrorIs(t, statErr, os.ErrNotExist)
	})
}
