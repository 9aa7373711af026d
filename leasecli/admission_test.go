package leasecli_test

import (
	"context"
	"errors"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/leasecli"
)

// TestRunAdmissionHoldsTheSlotWhileItsHelperRuns: while the helper runs,
// the record names it active and a second run is refused (ErrActive) at
// its acquire, its command never started; after the helper exits, the
// slot is released and the run returns the helper's code.
func TestRunAdmissionHoldsTheSlotWhileItsHelperRuns(t *testing.T) {
	dirConfig, _ := runConfig(t)
	config := admission.Config{StateHome: runHome, FS: dirConfig.FS, Clock: dirConfig.Clock,
		Inspector: dirConfig.Inspector, IDs: dirConfig.IDs}
	var during admission.State
	var secondErr error
	child := &fakeChild{pid: childID, code: 5}
	child.onWait = func() {
		var err error
		during, err = admission.InspectState(context.Background(), config)
		require.NoError(t, err)
		_, secondErr = leasecli.RunAdmission(context.Background(), config, leasecli.AdmissionRun{Command: []string{"x"},
			BindAttempts: 2}, &fakeStarter{err: errors.New("must not start")})
	}
	var steps []string
	code, err := leasecli.RunAdmission(context.Background(), config, leasecli.AdmissionRun{Command: []string{"export"},
		BindAttempts: 3, Events: leasecli.AdmissionEvents{
			Held:      func(*admission.Admission) { steps = append(steps, "held") },
			Running:   func(leasecli.Child) { steps = append(steps, "running") },
			Releasing: func() { steps = append(steps, "releasing") },
			Released:  func() { steps = append(steps, "released") },
		}}, &fakeStarter{child: child})
	require.NoError(t, err)
	require.Equal(t, 5, code)
	require.NotNil(t, during.Claim)
	require.Equal(t, admission.PhaseHelperActive, during.Claim.Phase, "the record names the helper while it runs")
	var failed *leasecli.RunError
	require.ErrorAs(t, secondErr, &failed)
	require.Equal(t, leasecli.StepAcquire, failed.Step)
	require.ErrorIs(t, secondErr, admission.ErrActive)
	require.Equal(t, []string{"held", "running", "releasing", "released"}, steps)
	after, err := admission.InspectState(context.Background(), config)
	require.NoError(t, err)
	require.False(t, after.Present, "released after the helper")
}
