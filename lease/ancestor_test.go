package lease_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestNamespaceBelowSymlinkedAncestor: a namespace named through a
// symlinked ancestor (as /var/lock -> /run/lock), without resolving it
// first, works for a library user: the engine follows the caller's
// ancestors when it fsyncs them and never follows its own entries (a
// symlink at the namespace is still refused). Before, the namespace's
// parent was fsynced through an O_NOFOLLOW open and every call failed with
// "not a directory".
func TestNamespaceBelowSymlinkedAncestor(t *testing.T) {
	cases := []struct {
		name      string
		namespace []string
		want      lease.AcquireKind
	}{
		{"parent is the symlink", []string{"lock", "job.lease"}, lease.Acquired},
		{"missing directories below the symlink", []string{"lock", "new", "deeper", "job.lease"}, lease.Acquired},
		{"symlink to a symlink", []string{"lock2", "job.lease"}, lease.Acquired},
		{"the namespace itself is a symlink", []string{"lock", "ns-link"}, lease.Refused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			root := filepath.Dir(w.ns)
			require.NoError(t, os.Mkdir(filepath.Join(root, "real"), 0o700))
			require.NoError(t, os.Symlink("real", filepath.Join(root, "lock")))
			require.NoError(t, os.Symlink("lock", filepath.Join(root, "lock2")))
			require.NoError(t, os.Mkdir(filepath.Join(root, "real", "target"), 0o700))
			require.NoError(t, os.Symlink("target", filepath.Join(root, "real", "ns-link")))
			w.ns = filepath.Join(append([]string{root}, tc.namespace...)...)
			m := w.manager(leasetest.Identity(1))
			result := w.acquire(m)
			require.Equal(t, tc.want, result.Kind, "%+v", result.Refusal)
			if tc.want == lease.Refused {
				require.Equal(t, lease.RefusalUnsafeNamespace, result.Refusal.Reason)
				entries, err := os.ReadDir(filepath.Join(root, "real", "target"))
				require.NoError(t, err)
				require.Empty(t, entries, "nothing is made through the namespace's symlink")
				return
			}
			released, err := m.Release(context.Background(), result.Owner.Generation)
			require.NoError(t, err)
			require.Equal(t, lease.Released, released.Kind)
			_, err = os.Lstat(filepath.Join(root, "real", "job.lease", "quarantine"))
			if tc.namespace[1] == "job.lease" {
				require.NoError(t, err, "the namespace was made in the symlink's target")
			}
		})
	}
}

// TestDanglingAncestorIsATypedError: a dangling symlink among the
// namespace's ancestors is a DanglingAncestorError naming the link, and
// nothing is created. Before, ensureAncestor recursed without end (Stat:
// ENOENT, Mkdir: EEXIST, again) until the goroutine stack overflowed.
func TestDanglingAncestorIsATypedError(t *testing.T) {
	cases := []struct {
		name      string
		namespace []string
		link      string
	}{
		{"parent", []string{"dangling", "ns"}, "dangling"},
		{"grandparent", []string{"dangling", "a", "ns"}, "dangling"},
		{"below a good symlink", []string{"lock", "dangling", "ns"}, "lock/dangling"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			root := filepath.Dir(w.ns)
			require.NoError(t, os.Mkdir(filepath.Join(root, "real"), 0o700))
			require.NoError(t, os.Symlink("real", filepath.Join(root, "lock")))
			require.NoError(t, os.Symlink("nowhere", filepath.Join(root, "dangling")))
			require.NoError(t, os.Symlink("nowhere", filepath.Join(root, "real", "dangling")))
			w.ns = filepath.Join(append([]string{root}, tc.namespace...)...)
			_, err := w.manager(leasetest.Identity(1)).Acquire(context.Background(), request)
			var dangling *lease.DanglingAncestorError
			require.True(t, errors.As(err, &dangling), "%v", err)
			require.Equal(t, filepath.Join(root, tc.link), dangling.Link)
			require.Equal(t, "nowhere", dangling.Target)
			require.Contains(t, err.Error(), dangling.Link)
			for _, dir := range []string{root, filepath.Join(root, "real")} {
				_, err := os.Lstat(filepath.Join(dir, "nowhere"))
				require.ErrorIs(t, err, os.ErrNotExist, "nothing is made at the link's target")
			}
		})
	}
}
