package lease_test

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// Issue 19, item 11: the boot check compared the record's boot id with the
// caller's only. With the caller's boot id unreadable (""), a PID reused
// after a reboot by a process with the same start ticks and executable
// was taken for the owner, although the inspection itself names the new
// boot.
func TestBootChangeIsSeenThroughTheInspectedProcess(t *testing.T) {
	owner := leasetest.Identity(7)
	afterReboot := owner
	afterReboot.BootID = "boot-2"
	caller := leasetest.Identity(1)
	cases := []struct {
		name       string
		callerBoot string
		observed   lease.ProcessIdentity
		want       lease.OwnerKind
		reason     string
	}{
		{"caller boot unreadable, process of another boot", "", afterReboot, lease.OwnerStale, lease.StaleBootChanged},
		{"caller boot known, process of another boot", "boot-2", afterReboot, lease.OwnerStale, lease.StaleBootChanged},
		{"caller boot unreadable, process of the same boot", "", owner, lease.OwnerLive, ""},
		{"process boot unreadable", "", func() lease.ProcessIdentity { id := owner; id.BootID = ""; return id }(),
			lease.OwnerLive, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			current := caller
			current.BootID = tc.callerBoot
			table := leasetest.NewInspector(current)
			table.SetLive(tc.observed)
			state := lease.ClassifyRecord(owner, current, table)
			require.Equal(t, tc.want, state.Kind, "%+v", state)
			require.Equal(t, tc.reason, state.Reason)
		})
	}
	t.Run("acquire reclaims it", func(t *testing.T) {
		w := newWorld(t)
		first := w.acquire(w.manager(owner)).Owner
		blindCaller := caller
		blindCaller.BootID = ""
		w.table.SetLive(afterReboot)
		result := w.acquire(w.manager(blindCaller))
		require.Equal(t, lease.Acquired, result.Kind, "%+v", result)
		require.Len(t, result.Reclaimed, 1)
		require.Equal(t, first.Generation, result.Reclaimed[0].Owner.Generation)
		require.Equal(t, lease.StaleBootChanged, result.Reclaimed[0].Reason)
	})
}
