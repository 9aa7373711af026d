package lease_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// hostileStrings are arguments no record can carry as written: invalid
// UTF-8 (Acquire with such a session id panicked under the guard before
// requests were validated: "owner does not round-trip"), NUL, and a string
// far over every bound.
var hostileStrings = []string{"\xff", "s\x00", "/s\xfe.json", "/a/\x00/b", strings.Repeat("x", 1<<20), "/" + strings.Repeat("y", 5000)}

// hostileWorld is a simfs namespace with nothing in it, and its Manager.
func hostileWorld(t *testing.T) (*lease.Manager, lease.FS) {
	t.Helper()
	sim := simfs.New(simfs.Options{Dev: 5})
	sim.MkdirAll(fuzzNamespace, 0o700, fuzzUID)
	fsys := sim.View(fuzzUID)
	manager, err := lease.NewManager(lease.Config{
		Namespace: fuzzNamespace, RootID: "root-1", FS: fsys, Clock: leasetest.NewClock(),
		Inspector: leasetest.NewInspector(fuzzIdentity(1)), IDs: leasetest.NewIDsWithPrefix(0xf023),
		GuardWait: 20 * time.Millisecond,
	})
	require.NoError(t, err)
	return manager, fsys
}

// requireRequestError: a hostile argument gets a typed refusal.
func requireRequestError(t *testing.T, err error) {
	t.Helper()
	var request *lease.RequestError
	require.True(t, errors.As(err, &request), "want *lease.RequestError, got %T: %v", err, err)
}

// requireNothingLeft: a refused call left no guard and no lease behind.
func requireNothingLeft(t *testing.T, manager *lease.Manager, fsys lease.FS) {
	t.Helper()
	_, err := fsys.Lstat(fuzzNamespace + "/receiver.lifecycle.guard.json")
	require.True(t, errors.Is(err, fs.ErrNotExist), "guard left behind: %v", err)
	projection, err := manager.Inspect(context.Background())
	require.NoError(t, err)
	require.Equal(t, lease.Empty, projection.Kind)
}

// TestHostileArgumentsAreRefusedBeforeAnyWrite calls every Manager method
// with each hostile string in each string argument: a *RequestError, no
// panic, no guard and no lease left behind.
func TestHostileArgumentsAreRefusedBeforeAnyWrite(t *testing.T) {
	ctx := context.Background()
	for _, hostile := range hostileStrings {
		calls := map[string]func(m *lease.Manager) error{
			"Acquire SessionID": func(m *lease.Manager) error {
				_, err := m.Acquire(ctx, lease.AcquireRequest{SessionID: hostile})
				return err
			},
			"Acquire SessionFile": func(m *lease.Manager) error {
				_, err := m.Acquire(ctx, lease.AcquireRequest{SessionFile: hostile})
				return err
			},
			"AcquireWait SessionID": func(m *lease.Manager) error {
				_, err := m.AcquireWait(ctx, lease.AcquireRequest{SessionID: hostile}, lease.WaitOptions{Timeout: time.Second})
				return err
			},
			"Release": func(m *lease.Manager) error {
				_, err := m.Release(ctx, hostile)
				return err
			},
			"WithCurrentLease": func(m *lease.Manager) error {
				return m.WithCurrentLease(ctx, hostile, func(context.Context, lease.Owner) error { return nil })
			},
			"ForceReclaim Generation": func(m *lease.Manager) error {
				_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerReceiver, Generation: hostile})
				return err
			},
			"ForceReclaim Path": func(m *lease.Manager) error {
				_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerIntent, Path: hostile})
				return err
			},
			"ForceReclaim Kind": func(m *lease.Manager) error {
				_, err := m.ForceReclaim(ctx, lease.ForceRequest{Kind: lease.BlockerKind(hostile)})
				return err
			},
		}
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				manager, fsys := hostileWorld(t)
				requireRequestError(t, call(manager))
				requireNothingLeft(t, manager, fsys)
			})
		}
	}
}

// TestHostileConfigIsRefused: NewManager refuses a namespace or root id no
// path or record can hold, with a *ConfigError.
func TestHostileConfigIsRefused(t *testing.T) {
	for _, hostile := range hostileStrings {
		for name, cfg := range map[string]lease.Config{
			"RootID":    {Namespace: "/ns", RootID: hostile},
			"Namespace": {Namespace: "/ns/" + hostile, RootID: "root"},
		} {
			cfg.FS, cfg.Clock = simfs.New(simfs.Options{}).View(0), leasetest.NewClock()
			cfg.Inspector, cfg.IDs = leasetest.NewInspector(fuzzIdentity(1)), leasetest.NewIDsWithPrefix(1)
			_, err := lease.NewManager(cfg)
			var config *lease.ConfigError
			require.True(t, errors.As(err, &config), "%s %q: want *lease.ConfigError, got %v", name, hostile[:min(len(hostile), 16)], err)
		}
	}
}

// FuzzAcquireRequest: whatever the session fields, Acquire either refuses
// with a *RequestError (nothing left behind) or records them as given.
func FuzzAcquireRequest(f *testing.F) {
	f.Add("s", "/s.json")
	f.Add("\xff", "")
	f.Add("", "/a/../b\x00")
	f.Fuzz(func(t *testing.T, sessionID, sessionFile string) {
		manager, fsys := hostileWorld(t)
		result, err := manager.Acquire(context.Background(), lease.AcquireRequest{SessionID: sessionID, SessionFile: sessionFile})
		if err != nil {
			requireRequestError(t, err)
			requireNothingLeft(t, manager, fsys)
			return
		}
		require.Equal(t, lease.Acquired, result.Kind)
		projection, err := manager.Inspect(context.Background())
		require.NoError(t, err)
		require.Equal(t, lease.Owned, projection.Kind, projection.Diagnostic)
		if sessionID != "" {
			require.Equal(t, sessionID, projection.Owner.SessionID)
		}
	})
}
