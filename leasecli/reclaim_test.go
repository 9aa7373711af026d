package leasecli_test

import (
	"context"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
)

// TestReclaimOfAKilledRun: reclaim's dry run lists the killed run's
// record and moves nothing; the forced run without --generation is
// refused before anything moves; with it, the record goes into
// quarantine/. A live run's record is refused by ForceReclaim itself.
func TestReclaimOfAKilledRun(t *testing.T) {
	ctx := context.Background()
	w := newTreeWorld(t)
	holder := w.wrapper(t)
	m, _ := w.manager(t, holder)
	acquired, err := m.Acquire(ctx, lease.AcquireRequest{})
	require.NoError(t, err)
	require.Equal(t, lease.Acquired, acquired.Kind)
	operator := w.wrapper(t)
	om, _ := w.manager(t, operator)
	reclaim := func(opts leasecli.ReclaimOptions) leasecli.ReclaimOutcome {
		projection, err := om.Inspect(ctx)
		require.NoError(t, err)
		outcome, err := leasecli.Reclaim(ctx, om, projection, opts)
		require.NoError(t, err)
		return outcome
	}
	generation := acquired.Owner.Generation
	confirmed := leasecli.ReclaimOptions{Force: true, Confirmed: map[string]bool{generation: true}}

	live := reclaim(confirmed)
	require.Equal(t, leasecli.ReclaimRefused, live.Result, "a live holder: %s", live.Why)
	require.Len(t, live.Forced, 1)
	require.Equal(t, lease.ForceRefused, live.Forced[0].Kind)

	w.host.Kill(holder)
	dry := reclaim(leasecli.ReclaimOptions{})
	require.Equal(t, leasecli.ReclaimDryRun, dry.Result)
	require.Len(t, dry.Targets, 1)
	require.Equal(t, generation, dry.Targets[0].Generation)
	require.Empty(t, dry.Forced)

	unconfirmed := reclaim(leasecli.ReclaimOptions{Force: true})
	require.Equal(t, leasecli.ReclaimRefused, unconfirmed.Result)
	require.Contains(t, unconfirmed.Why, "pass --generation "+generation)
	require.Empty(t, unconfirmed.Forced, "nothing moves before every confirmation is given")

	moved := reclaim(confirmed)
	require.Equal(t, leasecli.Reclaimed, moved.Result, moved.Why)
	require.Contains(t, moved.QuarantinePath, "/quarantine/")
	require.Equal(t, leasecli.ReclaimNothing, reclaim(confirmed).Result, "nothing is left to move")
}
