package dirlease

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestLaunchWindowHoldsUnderWallClockSteps: the launching window of a dead
// owner's lease is measured on the boot clock, so a wall-clock step either
// way neither starts recovery early nor holds it back; across a provable
// reboot it is over; where the boot cannot be told or there is no boot
// clock, nothing proves it over. A legacy claim (no boot-clock reading)
// keeps the original implementation's wall rule.
func TestLaunchWindowHoldsUnderWallClockSteps(t *testing.T) {
	const window = windowMs * time.Millisecond
	cases := []struct {
		name string
		// setup runs after the lease moved to launching and its owner died;
		// it returns the recoverer's configuration.
		setup func(w *world, l *Lease) Config
		want  Report
	}{
		{"wall steps an hour forward inside the window", func(w *world, _ *Lease) Config {
			w.clock.Advance(window / 2)
			w.clock.StepWall(time.Hour)
			return w.recoverer()
		}, Report{Indeterminate: 1}},
		{"wall steps an hour back after the window", func(w *world, _ *Lease) Config {
			w.clock.Advance(window + time.Millisecond)
			w.clock.StepWall(-time.Hour)
			return w.recoverer()
		}, Report{Recovered: 1}},
		{"window open, recoverer in another boot", func(w *world, _ *Lease) Config {
			self := leasetest.IdentityOf(2000, w.uid, "600")
			self.BootID = "a new boot"
			config := w.recoverer()
			config.Inspector = w.inspector.As(self)
			return config
		}, Report{Recovered: 1}},
		{"window passed, recoverer's boot unknown", func(w *world, _ *Lease) Config {
			w.clock.Advance(window + time.Millisecond)
			self := leasetest.IdentityOf(2000, w.uid, "600")
			self.BootID = ""
			config := w.recoverer()
			config.Inspector = w.inspector.As(self)
			return config
		}, Report{Indeterminate: 1}},
		{"window passed, recoverer without a boot clock", func(w *world, _ *Lease) Config {
			w.clock.Advance(window + time.Millisecond)
			config := w.recoverer()
			config.BootClock = nil
			return config
		}, Report{Indeterminate: 1}},
		{"legacy claim: the original implementation's wall rule, a forward step passes it", func(w *world, l *Lease) Config {
			w.legacy(l)
			w.clock.StepWall(window)
			return w.recoverer()
		}, Report{Recovered: 1}},
		{"legacy claim: the boot clock is not used", func(w *world, l *Lease) Config {
			w.legacy(l)
			w.clock.Advance(window + time.Millisecond)
			w.clock.StepWall(-time.Hour)
			return w.recoverer()
		}, Report{Indeterminate: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := w.raw("raw")
			must(t, l.Update(ctx, PhaseLaunching, 0))
			w.inspector.Kill(ownerPID)
			report, err := Recover(ctx, tc.setup(w, l))
			require.NoError(t, err)
			require.Equal(t, tc.want, report)
			require.Equal(t, tc.want.Recovered == 0, exists(t, l.Claim().Path))
		})
	}
}

// legacy rewrites l's claim file as the schema-3 claim of the same lease
// (no revision, no boot-clock reading), as an earlier version wrote it.
func (w *world) legacy(l *Lease) {
	w.t.Helper()
	claim := l.Claim()
	claim.SchemaVersion, claim.Revision, claim.CreatedAtBootMs = 3, "", NoBootTime
	data := claim.Bytes()
	parsed, err := Parse(data, claim.ID+".json", l.ClaimPath())
	must(w.t, err)
	require.True(w.t, parsed.Legacy())
	require.NotContains(w.t, string(data), "revision")
	must(w.t, os.WriteFile(l.ClaimPath(), data, 0o600))
}

// TestUpdateRotatesTheRevisionSoAStaleCopyLosesItsCompare: launching ->
// settled -> launching writes new bytes each time, so a copy of the handle
// taken at the first launching (an ABA) is refused and changes nothing.
func TestUpdateRotatesTheRevisionSoAStaleCopyLosesItsCompare(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	must(t, l.Update(ctx, PhaseLaunching, 0))
	stale := *l
	must(t, l.Update(ctx, PhaseSettled, 0))
	must(t, l.Update(ctx, PhaseLaunching, 0))
	require.NotEqual(t, stale.ContentSHA256(), l.ContentSHA256())
	require.NotEqual(t, stale.Claim().Revision, l.Claim().Revision)
	before, err := os.ReadFile(l.ClaimPath())
	must(t, err)
	err = stale.Update(ctx, PhaseSettled, 0)
	require.ErrorIs(t, err, ErrChanged)
	require.ErrorIs(t, stale.Release(ctx), ErrChanged)
	after, err := os.ReadFile(l.ClaimPath())
	must(t, err)
	require.Equal(t, before, after)
	must(t, l.Update(ctx, PhaseSettled, 0))
	must(t, l.Release(ctx))
}

// TestCancelledContextChangesNothing: every call checks ctx before it
// writes, and returns ctx.Err() with the state as it was.
func TestCancelledContextChangesNothing(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	before := snapshotTree(t, w.home, w.work)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Create(cancelled, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: w.dir("other"), RecoverAfterMs: startMs})
	require.ErrorIs(t, err, context.Canceled)
	must(t, os.RemoveAll(w.work+"/other"))
	require.ErrorIs(t, l.Update(cancelled, PhaseLaunching, 0), context.Canceled)
	require.ErrorIs(t, l.Release(cancelled), context.Canceled)
	w.inspector.Kill(ownerPID)
	_, err = Recover(cancelled, w.recoverer())
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, before, snapshotTree(t, w.home, w.work))
	must(t, l.Update(ctx, PhaseLaunching, 0))
}
