package osenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
)

// Issue 19, item 10, on the real inspectors: darwin's fail-closed inspector
// (and a /proc whose self entry cannot be read) never reports the caller,
// yet Inspect must work there; only the mutating calls fail closed.
func TestInspectWorksWhereTheCallerCannotBeInspected(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	namespace := filepath.Join(dir, "ns")
	writer, err := NewManager(namespace, "root")
	require.NoError(t, err)
	ctx := context.Background()
	want := lease.Empty
	if _, err := NewInspector().Current(); err == nil {
		want = lease.Owned
		acquired, err := writer.Acquire(ctx, lease.AcquireRequest{})
		require.NoError(t, err)
		require.Equal(t, lease.Acquired, acquired.Kind)
	}
	inspectors := map[string]lease.Inspector{
		"darwin":          unsupportedInspector{reason: errInspectionUnsupportedDarwin},
		"unreadable proc": NewInspectorAt(t.TempDir(), nil),
	}
	for name, inspector := range inspectors {
		t.Run(name, func(t *testing.T) {
			_, err := inspector.Current()
			require.Error(t, err, "the caller cannot be inspected")
			uid, err := inspector.(lease.CallerUIDReporter).CallerUID()
			require.NoError(t, err)
			require.Equal(t, uint32(os.Getuid()), uid)
			m, err := lease.NewManager(lease.Config{Namespace: namespace, RootID: "root", FS: NewFS(),
				Clock: NewClock(), Inspector: inspector, IDs: NewIDSource()})
			require.NoError(t, err)
			projection, err := m.Inspect(ctx)
			require.NoError(t, err)
			require.Equal(t, want, projection.Kind)
			_, err = m.Acquire(ctx, lease.AcquireRequest{})
			require.Error(t, err, "acquiring still fails closed")
		})
	}
}
