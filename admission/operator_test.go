package admission

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// wedged leaves the admission of a parent (PID 1000) that died while its
// helper (PID 3000) was active, the helper dead too: indeterminate until a
// reboot, as after kill -9 of `leasereal admission run`.
func (w *world) wedged() {
	w.t.Helper()
	a := mustAcquire(w.t, w.controller(1000, "500"))
	require.NoError(w.t, a.BeginHelperLaunch(ctx))
	w.inspector.SetLive(leasetest.IdentityOf(helperPID, w.uid, "900"))
	require.NoError(w.t, a.BindHelper(ctx, helperPID))
	w.inspector.Kill(1000)
	w.inspector.Kill(helperPID)
}

// TestQuarantineResolvesEveryStateAcquireRefuses: InspectState reports the
// state and the token; Quarantine moves exactly the judged bytes into
// quarantine/ and frees the slot; an active admission, a stale token or an
// absent file move nothing.
func TestQuarantineResolvesEveryStateAcquireRefuses(t *testing.T) {
	cases := []struct {
		name        string
		setup       func(w *world)
		disposition Disposition
	}{
		{"dead parent, helper-active", (*world).wedged, DispositionIndeterminate},
		{"uninspectable owner", func(w *world) {
			mustAcquire(w.t, w.controller(1000, "500"))
			w.inspector.Set(1000, leasetest.Unknown("EACCES (scripted)"))
		}, DispositionIndeterminate},
		{"corrupt file", func(w *world) {
			mustAcquire(w.t, w.controller(1000, "500"))
			require.NoError(w.t, os.WriteFile(w.file(), []byte("{not json"), 0o600))
		}, DispositionCorrupt},
		{"oversized file", func(w *world) {
			mustAcquire(w.t, w.controller(1000, "500"))
			require.NoError(w.t, os.WriteFile(w.file(), []byte(strings.Repeat(" ", RecordBytesMax+1)), 0o600))
		}, DispositionCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(w)
			operator := w.controller(2000, "600")
			_, err := Acquire(ctx, operator)
			require.Error(t, err, "Acquire must refuse the state the operator resolves")
			state, err := InspectState(ctx, operator)
			require.NoError(t, err)
			evidence := w.read()
			require.Equal(t, State{Path: w.file(), Present: true, ContentSHA256: statefile.SHA256Hex(evidence),
				Claim: state.Claim, Disposition: tc.disposition, Problem: state.Problem, OperatorNeeded: true}, state)
			require.Equal(t, tc.disposition == DispositionCorrupt, state.Claim == nil && state.Problem != "")

			_, err = Quarantine(ctx, operator, strings.Repeat("0", 64))
			require.ErrorIs(t, err, ErrChanged)
			require.Equal(t, evidence, w.read(), "a stale token moved nothing")

			moved, err := Quarantine(ctx, operator, state.ContentSHA256)
			require.NoError(t, err)
			require.Equal(t, filepath.Join(filepath.Dir(w.file()), QuarantineDir), filepath.Dir(moved.Path))
			kept, err := os.ReadFile(moved.Path)
			require.NoError(t, err)
			require.Equal(t, evidence, kept)
			after, err := InspectState(ctx, operator)
			require.NoError(t, err)
			require.False(t, after.Present)
			a := mustAcquire(t, operator)
			require.NoError(t, a.Release(ctx))
		})
	}
}

func TestQuarantineRefusesAnActiveOrAbsentAdmission(t *testing.T) {
	w := newWorld(t)
	operator := w.controller(2000, "600")
	_, err := Quarantine(ctx, operator, strings.Repeat("0", 64))
	require.ErrorIs(t, err, ErrChanged)

	held := mustAcquire(t, w.controller(1000, "500"))
	state, err := InspectState(ctx, operator)
	require.NoError(t, err)
	require.Equal(t, DispositionActive, state.Disposition)
	require.False(t, state.OperatorNeeded)
	_, err = Quarantine(ctx, operator, state.ContentSHA256)
	require.ErrorIs(t, err, ErrActive)
	require.NoError(t, held.Release(ctx), "the refused quarantine left the holder's admission as it was")
}

// TestMessagePrefixIsConfigurable: refusals start with the neutral default,
// or with the configured wording (the original implementation's, for programs that match it).
func TestMessagePrefixIsConfigurable(t *testing.T) {
	w := newWorld(t)
	mustAcquire(t, w.controller(1000, "500"))
	other := w.controller(2000, "600")
	_, err := Acquire(ctx, other)
	require.ErrorIs(t, err, ErrActive)
	require.True(t, strings.HasPrefix(err.Error(), "leasekit recovery: another export is active"), err.Error())
	other.MessagePrefix = SeedMessagePrefix
	_, err = Acquire(ctx, other)
	require.True(t, strings.HasPrefix(err.Error(), "Beeper Message Like Me recovery: another export is active"), err.Error())
}

// TestCancelledContextWritesNothing: a cancelled call returns ctx.Err()
// before any write.
func TestCancelledContextWritesNothing(t *testing.T) {
	w := newWorld(t)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Acquire(cancelled, w.controller(1000, "500"))
	require.ErrorIs(t, err, context.Canceled)
	_, statErr := os.Stat(w.file())
	require.True(t, os.IsNotExist(statErr))
	a := mustAcquire(t, w.controller(1000, "500"))
	before := w.read()
	require.ErrorIs(t, a.BeginHelperLaunch(cancelled), context.Canceled)
	require.ErrorIs(t, a.Release(cancelled), context.Canceled)
	require.Equal(t, before, w.read())
	_, err = Quarantine(cancelled, w.controller(2000, "600"), a.ContentSHA256())
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, a.Release(ctx))
}

// TestInspectStateRefusesWhatAcquireRefuses: a state home Acquire refuses
// (a loose admission directory, a symlinked one) is the same typed refusal
// from InspectState, never "no admission" (Present false, no error).
func TestInspectStateRefusesWhatAcquireRefuses(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(w *world, root string)
	}{
		{"group-writable admission directory", func(w *world, root string) {
			require.NoError(w.t, os.Chmod(root, 0o770))
		}},
		{"admission directory is a symlink", func(w *world, root string) {
			elsewhere := filepath.Join(w.t.TempDir(), "elsewhere")
			require.NoError(w.t, os.Mkdir(elsewhere, 0o700))
			require.NoError(w.t, os.Rename(root, filepath.Join(elsewhere, "moved")))
			require.NoError(w.t, os.Symlink(filepath.Join(elsewhere, "moved"), root))
		}},
		{"group-writable state home", func(w *world, root string) {
			require.NoError(w.t, os.Chmod(w.home, 0o775))
		}},
		{"recovery/ mode 0770", func(w *world, root string) {
			require.NoError(w.t, os.Chmod(filepath.Dir(root), 0o770))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			mustAcquire(t, w.controller(1000, "500")) // a record, held
			tc.spoil(w, filepath.Dir(w.file()))
			operator := w.controller(2000, "600")
			_, acquireErr := Acquire(ctx, operator)
			require.ErrorIs(t, acquireErr, ErrUnsafe)
			state, err := InspectState(ctx, operator)
			require.ErrorIs(t, err, ErrUnsafe, "inspect reported %+v", state)
			require.False(t, state.Present)
			claim, disposition, err := Inspect(ctx, operator)
			require.ErrorIs(t, err, ErrUnsafe, "Inspect read %+v (%s)", claim, disposition)
			require.Nil(t, claim)
		})
	}
}

// TestQuarantineTellsAWrongConfirmation: a confirmation that is not a
// SHA-256 is ErrInvalidRequest; a SHA-256 that is not the file's is
// ErrMismatch naming the current one (and, as a change might be the cause,
// ErrChanged too); nothing moves either way.
func TestQuarantineTellsAWrongConfirmation(t *testing.T) {
	w := newWorld(t)
	w.wedged()
	operator := w.controller(2000, "600")
	state, err := InspectState(ctx, operator)
	require.NoError(t, err)
	for _, malformed := range []string{"", "abc", strings.ToUpper(state.ContentSHA256), state.ContentSHA256 + "0", "\xff" + state.ContentSHA256[1:]} {
		_, err := Quarantine(ctx, operator, malformed)
		require.ErrorIs(t, err, ErrInvalidRequest, "%q", malformed)
	}
	wrong := strings.Repeat("0", 64)
	_, err = Quarantine(ctx, operator, wrong)
	require.ErrorIs(t, err, ErrMismatch)
	require.ErrorIs(t, err, ErrChanged)
	require.Contains(t, err.Error(), state.ContentSHA256)
	after, err := InspectState(ctx, operator)
	require.NoError(t, err)
	require.Equal(t, state, after, "a refused quarantine moved nothing")
}

// TestQuarantineRefusesALiveRecordedHelper: a parent that died after
// marking its active helper cleanup-unsafe leaves an indeterminate
// admission (only a reboot proves the helper's descendants gone), but the
// helper the record names is still running: Quarantine must refuse it
// (ErrActive), as it refuses a live owner, and move nothing. Found by
// simulation (random admission seed 29100180, kept as
// testdata/seeds/admission/ok-ee7d8c41fa8240a2.seed:
// "operator-0's Quarantine moved admission ... (cleanup-unsafe) whose
// helper controller-0-helper (PID 5) is alive in the operator's own host
// and PID namespace"). InspectState says the state waits for that helper
// (operator-needed only once it has ended): found by the operator oracle
// at admission seed 38 (kept as ok-dda60395f9146c94.seed).
func TestQuarantineRefusesALiveRecordedHelper(t *testing.T) {
	w := newWorld(t)
	a := mustAcquire(t, w.controller(1000, "500"))
	require.NoError(t, a.BeginHelperLaunch(ctx))
	w.inspector.SetLive(leasetest.IdentityOf(helperPID, w.uid, "900"))
	require.NoError(t, a.BindHelper(ctx, helperPID))
	require.NoError(t, a.MarkCleanupUnsafe(ctx))
	w.inspector.Kill(1000)
	operator := w.controller(2000, "600")
	state, err := InspectState(ctx, operator)
	require.NoError(t, err)
	require.Equal(t, DispositionIndeterminate, state.Disposition)
	require.False(t, state.OperatorNeeded, "InspectState must not send the operator to a Quarantine that refuses")
	require.Contains(t, state.Waiting, "helper (PID "+strconv.Itoa(helperPID)+") still runs")
	evidence := w.read()

	_, err = Quarantine(ctx, operator, state.ContentSHA256)
	require.ErrorIs(t, err, ErrActive)
	require.Contains(t, err.Error(), "helper")
	require.Equal(t, evidence, w.read(), "a refused quarantine moves nothing")

	w.inspector.Kill(helperPID)
	state, err = InspectState(ctx, operator)
	require.NoError(t, err)
	require.True(t, state.OperatorNeeded, "with the helper gone only an operator or a reboot frees the slot")
	require.Empty(t, state.Waiting)
	_, err = Quarantine(ctx, operator, state.ContentSHA256)
	require.NoError(t, err, "once the recorded helper is gone the operator's judgement decides")
}
