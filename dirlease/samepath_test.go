package dirlease

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestOneLeasePerDirectory is issue 30's first defect at the library: two
// runs on one path were both accepted; after the first died (kill -9) and
// the second held on, recovery reported "active 1, recovered 1" and removed
// the directory the live second run was working in. A second Create on a
// held directory is now refused as busy, and recovery never removes a
// directory another claim names.
func TestOneLeasePerDirectory(t *testing.T) {
	w := newWorld(t)
	path := w.dir("shared")
	_, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: path, RecoverAfterMs: startMs + windowMs})
	require.NoError(t, err)
	w.inspector.SetLive(leasetest.IdentityOf(ownerPID+1, w.uid, "501"))
	second := w.controller(ownerPID+1, "501")
	_, err = Create(ctx, second, CreateRequest{Role: RoleRawWorking, Path: path, RecoverAfterMs: startMs + windowMs})
	require.ErrorIs(t, err, ErrBusy)
	entries, err := os.ReadDir(w.root())
	require.NoError(t, err)
	require.Len(t, entries, 1, "a refused Create leaves no claim")

	w.inspector.Kill(ownerPID)
	_, err = Create(ctx, second, CreateRequest{Role: RoleRawWorking, Path: path, RecoverAfterMs: startMs + windowMs})
	require.ErrorIs(t, err, ErrBusy, "a dead owner's claim still names the directory until recovery")
	report, err := Recover(ctx, w.recoverer())
	require.NoError(t, err)
	require.Equal(t, Report{Recovered: 1}, report, "the dead first run's directory is its own")
	require.False(t, exists(t, path))
}

// TestOneLeasePerDirectoryByIdentity: the directory a claim names, renamed
// to another name, is still held: a Create on the new name is busy.
func TestOneLeasePerDirectoryByIdentity(t *testing.T) {
	w := newWorld(t)
	path := w.dir("shared")
	_, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: path, RecoverAfterMs: startMs + windowMs})
	require.NoError(t, err)
	renamed := filepath.Join(filepath.Dir(path), "renamed")
	require.NoError(t, os.Rename(path, renamed))
	w.inspector.SetLive(leasetest.IdentityOf(ownerPID+1, w.uid, "501"))
	_, err = Create(ctx, w.controller(ownerPID+1, "501"), CreateRequest{Role: RoleRawWorking, Path: renamed, RecoverAfterMs: startMs + windowMs})
	require.ErrorIs(t, err, ErrBusy)
	require.Contains(t, err.Error(), "busy")
}

// TestRecoveryNeverRemovesADirectoryAnotherClaimNames: two claims on one
// directory (as an engine before the busy refusal wrote them): the dead
// owner's claim is not recovered while a live one names the same directory.
func TestRecoveryNeverRemovesADirectoryAnotherClaimNames(t *testing.T) {
	w := newWorld(t)
	path, _ := w.deadBesideLiveTwin()
	report, err := Recover(ctx, w.recoverer())
	require.NoError(t, err)
	require.Equal(t, 0, report.Recovered)
	require.True(t, exists(t, filepath.Join(path, "nested", "data.bin")), "the live claim's directory is kept")
}

// TestInspectSaysAnotherClaimHoldsTheDirectory: Inspect judges as Recover
// does: the dead claim whose directory a live claim names is not
// recoverable, and says why.
func TestInspectSaysAnotherClaimHoldsTheDirectory(t *testing.T) {
	w := newWorld(t)
	_, dead := w.deadBesideLiveTwin()
	states, err := Inspect(ctx, w.recoverer())
	require.NoError(t, err)
	require.Len(t, states, 2)
	for _, state := range states {
		require.Equal(t, DispositionActive, state.Disposition, state.Name)
		require.False(t, state.OperatorNeeded)
		if state.Name == dead.Claim().ID+".json" {
			require.Contains(t, state.Problem, "another claim names its directory")
		}
	}
}

// deadBesideLiveTwin leases a directory as the default owner, plants a live
// twin claim on it, and kills the owner: two claims on one directory, the
// first one's owner dead.
func (w *world) deadBesideLiveTwin() (string, *Lease) {
	w.t.Helper()
	path := w.dir("shared")
	dead, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: path, RecoverAfterMs: startMs + windowMs})
	require.NoError(w.t, err)
	w.plantLiveTwin(dead.Claim())
	w.inspector.Kill(ownerPID)
	return path, dead
}

// plantLiveTwin writes a second claim on the directory of c, owned by a
// live process (PID ownerPID+1), as an engine before the busy refusal let a
// second Create write it.
func (w *world) plantLiveTwin(c Claim) {
	w.t.Helper()
	w.inspector.SetLive(leasetest.IdentityOf(ownerPID+1, w.uid, "501"))
	c.ID, c.Revision = "7b0c4f3e-1d2a-4c5b-9e8f-0a1b2c3d4e5f", "8c1d5f4e-2e3b-4d6c-8f9a-1b2c3d4e5f60"
	c.Owner = statecas.OwnerOf(leasetest.IdentityOf(ownerPID+1, w.uid, "501"))
	require.NoError(w.t, os.WriteFile(filepath.Join(w.root(), c.ID+".json"), c.Bytes(), 0o600))
}

// TestCreateFailsClosedOnAClaimItCannotRead: a claim file that does not
// parse may name the same directory: Create refuses, withdrawing its own
// claim, rather than pass it over (the simulator found the pass-over: an
// unreadable claim let a second run in beside a dead one, and recovery
// then removed the directory under it).
func TestCreateFailsClosedOnAClaimItCannotRead(t *testing.T) {
	w := newWorld(t)
	w.raw("first")
	corrupt := filepath.Join(w.root(), "7b0c4f3e-1d2a-4c5b-9e8f-0a1b2c3d4e5f.json")
	require.NoError(t, os.WriteFile(corrupt, []byte("{not a claim"), 0o600))
	_, err := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: w.dir("second"), RecoverAfterMs: startMs + windowMs})
	require.ErrorIs(t, err, ErrCorrupt)
	entries, err := os.ReadDir(w.root())
	require.NoError(t, err)
	require.Len(t, entries, 2, "the refused Create withdrew its claim; the others are untouched")
}

// TestQuarantineWaitsWhileAnotherClaimHoldsTheDirectory: Inspect judges a
// dead owner's claim whose directory another claim holds as that claim
// (here indeterminate: its owner cannot be inspected) and says no operator
// is needed, since recovery takes it once the other claim ends. Quarantine
// refuses what Inspect says time resolves, as it refuses a running launch
// window: the dirlease campaign found a Quarantine that moved such a claim
// (seed 17740, "operator-0-t2's Quarantine moved ..., which its own
// Inspect judged resolved by time").
func TestQuarantineWaitsWhileAnotherClaimHoldsTheDirectory(t *testing.T) {
	w := newWorld(t)
	_, dead := w.deadBesideLiveTwin()
	w.inspector.Set(ownerPID+1, leasetest.Unknown("permission denied"))
	states, err := Inspect(ctx, w.recoverer())
	require.NoError(t, err)
	var judged ClaimState
	for _, state := range states {
		if state.Name == dead.Claim().ID+".json" {
			judged = state
		}
	}
	require.Equal(t, DispositionIndeterminate, judged.Disposition)
	require.False(t, judged.OperatorNeeded)
	_, err = Quarantine(ctx, w.recoverer(), judged.Name, judged.ContentSHA256)
	require.ErrorIs(t, err, ErrWaiting)
	require.Contains(t, err.Error(), "another claim")
	require.True(t, exists(t, dead.ClaimPath()), "a refused quarantine moves nothing")
}
