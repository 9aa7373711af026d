package osenv

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
)

// TestResolveNamespace: symlinked ancestors are resolved, missing ones kept
// below the deepest existing one, the last component never followed.
func TestResolveNamespace(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o700))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "lock")))
	require.NoError(t, os.Symlink(filepath.Join(real, "elsewhere"), filepath.Join(real, "ns-link")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")))
	require.NoError(t, os.WriteFile(filepath.Join(real, "file"), nil, 0o600))
	cases := []struct{ in, want string }{
		{filepath.Join(dir, "lock", "job.lease"), filepath.Join(real, "job.lease")},
		{filepath.Join(dir, "lock", "a", "b", "job.lease"), filepath.Join(real, "a", "b", "job.lease")},
		{filepath.Join(dir, "lock", "ns-link"), filepath.Join(real, "ns-link")},
		{filepath.Join(dir, "lock", ".", "x", "..", "job.lease"), filepath.Join(real, "job.lease")},
		{filepath.Join(dir, "plain", "job.lease"), filepath.Join(dir, "plain", "job.lease")},
		{filepath.Join(dir, "lock", "file", "a", "job.lease"), filepath.Join(real, "file", "a", "job.lease")},
		{"/", "/"},
	}
	for _, c := range cases {
		got, err := ResolveNamespace(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	_, err = ResolveNamespace(filepath.Join(dir, "dangling", "job.lease"))
	require.ErrorIs(t, err, fs.ErrNotExist, "a dangling ancestor is an error")

	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	t.Cleanup(func() { require.NoError(t, os.Chdir(wd)) })
	got, err := ResolveNamespace("lock/job.lease")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(real, "job.lease"), got, "a relative path is made absolute")
}

// TestLeaseUnderSymlinkedAncestor: a lease whose namespace lies below a
// symlinked ancestor (as /var/lock -> /run/lock) works once resolved, and a
// symlink at the namespace itself is still refused (issue 19, item 1).
func TestLeaseUnderSymlinkedAncestor(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "real"), 0o700))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "lock")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "real", "target"), 0o700))
	require.NoError(t, os.Symlink("target", filepath.Join(dir, "real", "ns-link")))
	acquire := func(path string) lease.AcquireResult {
		namespace, err := ResolveNamespace(path)
		require.NoError(t, err)
		manager, err := lease.NewManager(lease.Config{Namespace: namespace, RootID: "root", FS: NewFS(),
			Clock: NewClock(), Inspector: NewInspector(), IDs: NewIDSource()})
		require.NoError(t, err)
		result, err := manager.Acquire(context.Background(), lease.AcquireRequest{SessionID: "s", SessionFile: "/s"})
		require.NoError(t, err, path)
		return result
	}
	require.Equal(t, lease.Acquired, acquire(filepath.Join(dir, "lock", "job.lease")).Kind)
	require.Equal(t, lease.Acquired, acquire(filepath.Join(dir, "lock", "new", "deeper", "job.lease")).Kind)
	refused := acquire(filepath.Join(dir, "lock", "ns-link"))
	require.Equal(t, lease.Refused, refused.Kind)
	require.Equal(t, lease.RefusalUnsafeNamespace, refused.Refusal.Reason)
}

// TestNewManagerBelowSymlinkedAncestor: osenv.NewManager, the one-line use,
// takes a namespace below a symlinked ancestor as the user named it, with
// no ResolveNamespace first (issue 19 follow-up: the engine fsyncs the
// caller's ancestors with a following open).
func TestNewManagerBelowSymlinkedAncestor(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "real"), 0o700))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "lock")))
	for _, namespace := range []string{filepath.Join(dir, "lock", "job.lease"), filepath.Join(dir, "lock", "a", "job.lease")} {
		manager, err := NewManager(namespace, "root")
		require.NoError(t, err)
		result, err := manager.Acquire(context.Background(), lease.AcquireRequest{})
		require.NoError(t, err, namespace)
		require.Equal(t, lease.Acquired, result.Kind, namespace)
		released, err := manager.Release(context.Background(), result.Owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.Released, released.Kind)
	}
	_, err := os.Lstat(filepath.Join(dir, "real", "a", "job.lease", "quarantine"))
	require.NoError(t, err, "the namespace is in the link's target")
}
