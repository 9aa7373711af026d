package workkit

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/lease"
)

// scriptedInspector answers Inspect from a table: a PID not in it is absent.
type scriptedInspector struct {
	lease.Inspector
	answers map[int]lease.InspectionKind
}

func (s scriptedInspector) Inspect(pid int) lease.Inspection {
	if kind, ok := s.answers[pid]; ok {
		return lease.Inspection{Kind: kind}
	}
	return lease.Inspection{Kind: lease.InspectAbsent}
}

// TestUnknownInspectorRemembersOnlyUnknownAnswers: the oracle may hold an
// operator to a live process only where its own inspection read it, so
// exactly the PIDs answered unknown since the last Forget are remembered,
// and every answer passes through unchanged.
func TestUnknownInspectorRemembersOnlyUnknownAnswers(t *testing.T) {
	i := &UnknownInspector{Inspector: scriptedInspector{answers: map[int]lease.InspectionKind{7: lease.InspectUnknown}}}

	require.Equal(t, lease.InspectUnknown, i.Inspect(7).Kind)
	require.Equal(t, lease.InspectAbsent, i.Inspect(8).Kind)
	require.Equal(t, map[int]bool{7: true}, i.Unknown)

	i.Forget()
	require.Empty(t, i.Unknown)
	require.Equal(t, lease.InspectAbsent, i.Inspect(8).Kind)
	require.False(t, i.Unknown[7], "a PID answered unknown before Forget is forgotten")
}
