package dirlease

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestQuarantineResolvesWhatRecoverRefuses: a corrupt claim stops every
// recovery pass, and a dead owner's launching lease without a boot-clock
// proof stays indeterminate within this boot; Inspect reports both with
// their tokens and says an operator is needed; Quarantine moves exactly the
// judged bytes into the quarantine (the leased directory stays), and
// recovery goes on. A stale token or a live owner moves nothing.
func TestQuarantineResolvesWhatRecoverRefuses(t *testing.T) {
	cases := []struct {
		name        string
		setup       func(w *world) (name string)
		disposition Disposition
	}{
		{"corrupt claim", func(w *world) string {
			l := w.raw("raw")
			must(w.t, os.WriteFile(l.ClaimPath(), []byte(`{"kind":"not a claim"}`), 0o600))
			w.inspector.Kill(ownerPID)
			return filepath.Base(l.ClaimPath())
		}, DispositionCorrupt},
		{"launching, no boot clock at creation", func(w *world) string {
			config := w.controller(ownerPID, "500")
			config.BootClock = nil
			l, err := Create(ctx, config, CreateRequest{Role: RoleRawWorking, Path: w.dir("raw"), RecoverAfterMs: startMs + windowMs})
			must(w.t, err)
			must(w.t, l.Update(ctx, PhaseLaunching, 0))
			w.inspector.Kill(ownerPID)
			w.clock.Advance(2 * windowMs * time.Millisecond)
			return filepath.Base(l.ClaimPath())
		}, DispositionIndeterminate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			name := tc.setup(w)
			operator := w.recoverer()
			before, err := Recover(ctx, operator)
			if tc.disposition == DispositionCorrupt {
				require.ErrorIs(t, err, ErrCorrupt)
			} else {
				require.NoError(t, err)
				require.Equal(t, Report{Indeterminate: 1}, before)
			}
			states, err := Inspect(ctx, operator)
			require.NoError(t, err)
			require.Len(t, states, 1)
			state := states[0]
			evidence, err := os.ReadFile(filepath.Join(w.root(), name))
			must(t, err)
			require.Equal(t, name, state.Name)
			require.Equal(t, tc.disposition, state.Disposition)
			require.True(t, state.OperatorNeeded)
			require.Equal(t, statefile.SHA256Hex(evidence), state.ContentSHA256)

			_, err = Quarantine(ctx, operator, name, strings.Repeat("0", 64))
			require.ErrorIs(t, err, ErrChanged)
			moved, err := Quarantine(ctx, operator, name, state.ContentSHA256)
			require.NoError(t, err)
			kept, err := os.ReadFile(moved.Path)
			must(t, err)
			require.Equal(t, evidence, kept)
			require.Equal(t, filepath.Join(append([]string{w.home}, QuarantineDir...)...), filepath.Dir(moved.Path))
			require.True(t, exists(t, filepath.Join(w.work, "raw")), "the leased directory is the operator's")
			report, err := Recover(ctx, operator)
			require.NoError(t, err)
			require.Equal(t, Report{}, report)
		})
	}
}

func TestQuarantineRefusesALiveOwnersClaim(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	states, err := Inspect(ctx, w.recoverer())
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Equal(t, DispositionActive, states[0].Disposition)
	require.False(t, states[0].OperatorNeeded)
	_, err = Quarantine(ctx, w.recoverer(), states[0].Name, states[0].ContentSHA256)
	require.ErrorIs(t, err, ErrActive)
	_, err = Quarantine(ctx, w.recoverer(), "../"+states[0].Name, states[0].ContentSHA256)
	require.ErrorIs(t, err, ErrInvalidRequest)
	must(t, l.Update(ctx, PhaseLaunching, 0))
	must(t, l.Update(ctx, PhaseSettled, 0))
	must(t, l.Release(ctx))
}

// TestQuarantineRefusesARunningChildsClaim: a running lease whose owner
// cannot be inspected (EACCES) while the child it records is alive is in
// use: Inspect says active and asks no operator, and Quarantine refuses to
// move it, so no next run starts beside the child. With the child dead the
// claim is the operator's again.
func TestQuarantineRefusesARunningChildsClaim(t *testing.T) {
	w := newWorld(t)
	w.running()
	w.inspector.Set(ownerPID, leasetest.Unknown("permission denied"))
	states, err := Inspect(ctx, w.recoverer())
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Equal(t, DispositionActive, states[0].Disposition)
	require.False(t, states[0].OperatorNeeded)
	_, err = Quarantine(ctx, w.recoverer(), states[0].Name, states[0].ContentSHA256)
	require.ErrorIs(t, err, ErrActive)

	w.inspector.Kill(childPID)
	states, err = Inspect(ctx, w.recoverer())
	require.NoError(t, err)
	require.Equal(t, DispositionIndeterminate, states[0].Disposition)
	require.True(t, states[0].OperatorNeeded)
	_, err = Quarantine(ctx, w.recoverer(), states[0].Name, states[0].ContentSHA256)
	require.NoError(t, err)
}

// TestInspectSaysWhenWaitingResolves: a launching lease measured on a boot
// clock resolves by itself; no operator is asked for, and Quarantine
// refuses it (ErrWaiting) as it refuses an active claim: a child the dead
// owner was launching may still be starting in the directory. Once the
// window is over, recovery takes it.
func TestInspectSaysWhenWaitingResolves(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	must(t, l.Update(ctx, PhaseLaunching, 0))
	w.inspector.Kill(ownerPID)
	states, err := Inspect(ctx, w.recoverer())
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Equal(t, DispositionIndeterminate, states[0].Disposition)
	require.False(t, states[0].OperatorNeeded)
	_, err = Quarantine(ctx, w.recoverer(), states[0].Name, states[0].ContentSHA256)
	require.ErrorIs(t, err, ErrWaiting)
	require.True(t, exists(t, l.ClaimPath()), "a refused quarantine moves nothing")
	w.clock.Advance(2 * windowMs * time.Millisecond)
	report, err := Recover(ctx, w.recoverer())
	require.NoError(t, err)
	require.Equal(t, Report{Recovered: 1}, report)
}

// TestQuarantineTellsAWrongConfirmation: a confirmation that is not a
// SHA-256 is a malformed request; a SHA-256 that is not the claim file's
// now is a mismatch naming the current one (also ErrChanged: a typo and a
// change look alike); an absent claim says there is nothing to quarantine.
// None of them moves anything.
func TestQuarantineTellsAWrongConfirmation(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	must(t, os.WriteFile(l.ClaimPath(), []byte(`{"kind":"not a claim"}`), 0o600))
	w.inspector.Kill(ownerPID)
	operator := w.recoverer()
	name := filepath.Base(l.ClaimPath())
	states, err := Inspect(ctx, operator)
	require.NoError(t, err)
	require.Len(t, states, 1)
	sha := states[0].ContentSHA256
	for _, malformed := range []string{"", "abc", strings.ToUpper(sha), sha + "0", "\xff" + sha[1:]} {
		_, err := Quarantine(ctx, operator, name, malformed)
		require.ErrorIs(t, err, ErrInvalidRequest, "%q", malformed)
	}
	_, err = Quarantine(ctx, operator, name, strings.Repeat("0", 64))
	require.ErrorIs(t, err, ErrMismatch)
	require.ErrorIs(t, err, ErrChanged)
	require.Contains(t, err.Error(), sha)
	_, err = Quarantine(ctx, operator, "absent.json", sha)
	require.ErrorIs(t, err, ErrChanged)
	require.Contains(t, err.Error(), "nothing to quarantine")
	after, err := Inspect(ctx, operator)
	require.NoError(t, err)
	require.Equal(t, states, after, "a refused quarantine moved nothing")
}

// TestQuarantineWaitsForTheWindowWhateverTheOwnersInspectionSays: while a
// launching lease's window provably runs, Quarantine refuses it (ErrWaiting)
// even when Inspect could not tell its owner dead and asks for an operator:
// the owner may be dead all the same, a child it was launching still
// starting. An owner that cannot be inspected (EACCES on /proc, which the
// simulator draws as a transient answer: dirlease seed 7485 moved a dead
// owner's claim 1 ms into its window so), or one found dead and then not
// inspectable in the same judgement, is such a case. Once the window is
// over, the operator's quarantine moves the claim.
func TestQuarantineWaitsForTheWindowWhateverTheOwnersInspectionSays(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
	}{
		{"owner cannot be inspected", func(w *world) {
			w.inspector.Set(ownerPID, leasetest.Unknown("permission denied"))
		}},
		{"owner dead, then cannot be inspected", func(w *world) {
			w.inspector.Kill(ownerPID)
			w.inspector.OnInspect(func(pid int) {
				if pid == ownerPID && w.inspector.Inspected(ownerPID) > 0 {
					w.inspector.Set(ownerPID, leasetest.Unknown("permission denied"))
				}
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l := w.raw("raw")
			must(t, l.Update(ctx, PhaseLaunching, 0))
			tc.setup(w)
			states, err := Inspect(ctx, w.recoverer())
			require.NoError(t, err)
			require.Len(t, states, 1)
			require.Equal(t, DispositionIndeterminate, states[0].Disposition)
			require.True(t, states[0].OperatorNeeded)
			_, err = Quarantine(ctx, w.recoverer(), states[0].Name, states[0].ContentSHA256)
			require.ErrorIs(t, err, ErrWaiting)
			require.True(t, exists(t, l.ClaimPath()), "a refused quarantine moves nothing")

			w.clock.Advance(2 * windowMs * time.Millisecond)
			w.inspector.OnInspect(nil)
			w.inspector.Set(ownerPID, leasetest.Unknown("permission denied"))
			moved, err := Quarantine(ctx, w.recoverer(), states[0].Name, states[0].ContentSHA256)
			require.NoError(t, err)
			require.False(t, exists(t, l.ClaimPath()))
			require.True(t, exists(t, moved.Path))
		})
	}
}

// TestInspectRefusesWhatCreateRefuses: a state home Create and Recover
// refuse (missing, group-writable, a part of the claim directory's path not
// 0700) is the same ErrUnsafe refusal from Inspect, never "no claims" and
// never a list of claims; a home whose claim directory is not made yet is
// free. The claim's file is left where it is.
func TestInspectRefusesWhatCreateRefuses(t *testing.T) {
	cases := []struct {
		name   string
		loosen func(w *world)
		// refused is what Create and Inspect must do.
		refused bool
	}{
		{"private home, no claim directory yet", func(w *world) {}, false},
		{"missing home", func(w *world) { must(w.t, os.Remove(w.home)) }, true},
		{"group-writable home", func(w *world) { must(w.t, os.Chmod(w.home, 0o775)) }, true},
		{"recovery/ mode 0770", func(w *world) {
			must(w.t, os.MkdirAll(w.root(), 0o700))
			must(w.t, os.Chmod(filepath.Dir(w.root()), 0o770))
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.loosen(w)
			states, err := Inspect(ctx, w.recoverer())
			_, createErr := Create(ctx, w.controller(ownerPID, "500"), CreateRequest{Role: RoleRawWorking, Path: w.dir("raw"), RecoverAfterMs: startMs + windowMs})
			if !tc.refused {
				require.NoError(t, err)
				require.Empty(t, states)
				require.NoError(t, createErr)
				return
			}
			require.ErrorIs(t, createErr, ErrUnsafe)
			require.ErrorIs(t, err, ErrUnsafe)
			require.Nil(t, states)
			require.Contains(t, err.Error(), "could not be inspected safely")
		})
	}
}

// TestInspectOfALoosenedHomeListsNothing: with live claims in a home whose
// claim directory's parent is loosened after they were made, Inspect
// refuses rather than judging claims no Quarantine or Recover could then
// act on; the claims stay.
func TestInspectOfALoosenedHomeListsNothing(t *testing.T) {
	w := newWorld(t)
	l := w.raw("raw")
	must(t, os.Chmod(w.home, 0o777))
	states, err := Inspect(ctx, w.recoverer())
	require.ErrorIs(t, err, ErrUnsafe)
	require.Nil(t, states)
	require.True(t, exists(t, l.ClaimPath()))
	_, err = Quarantine(ctx, w.recoverer(), filepath.Base(l.ClaimPath()), "0000000000000000000000000000000000000000000000000000000000000000")
	require.ErrorIs(t, err, ErrUnsafe)
}
