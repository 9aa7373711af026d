package workkit

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestUnknownInspectorRemembersOnlyUnknownAnswers: the oracle may hold an
// operator to a live process only where its own inspection read it, so
// exactly the PIDs answered unknown since the last Forget are remembered,
// and every answer passes through unchanged.
func TestUnknownInspectorRemembersOnlyUnknownAnswers(t *testing.T) {
	inner := leasetest.NewInspector(leasetest.Identity(1))
	inner.Set(7, leasetest.Unknown("EACCES (scripted)"))
	inner.Set(8, lease.Inspection{Kind: lease.InspectAbsent})
	i := &UnknownInspector{Inspector: inner}

	require.Equal(t, lease.InspectUnknown, i.Inspect(7).Kind)
	require.Equal(t, lease.InspectAbsent, i.Inspect(8).Kind)
	require.Equal(t, map[int]bool{7: true}, i.Unknown)

	i.Forget()
	require.Empty(t, i.Unknown)
	require.Equal(t, lease.InspectAbsent, i.Inspect(8).Kind)
	require.False(t, i.Unknown[7], "a PID answered unknown before Forget is forgotten")
}
