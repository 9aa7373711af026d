package modelmap

import (
	"errors"
	"fmt"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/models"
)

// TestLeaseAcquireKeepsWhatTheModelChecks: each kind maps to the model's
// with the fields the model checks; an unmapped refusal is RefusalNone
// and not ok; Reclaimed is kept whatever the kind.
func TestLeaseAcquireKeepsWhatTheModelChecks(t *testing.T) {
	owner := lease.Owner{Generation: "g2", SessionID: "s2", Epoch: 7}
	reclaimed := []lease.Reclaim{{Owner: lease.Owner{Generation: "g1"}}}
	cases := []struct {
		name   string
		result lease.AcquireResult
		want   models.LeaseAcquireResult
		ok     bool
	}{
		{"acquired", lease.AcquireResult{Kind: lease.Acquired, Owner: owner, Reclaimed: reclaimed},
			models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: "g2", Epoch: 7, Reclaimed: []string{"g1"}}, true},
		{"held", lease.AcquireResult{Kind: lease.Held, Owner: owner},
			models.LeaseAcquireResult{Kind: models.LeaseHeld, Generation: "g2", Session: "s2", Epoch: 7}, true},
		{"refused", lease.AcquireResult{Kind: lease.Refused, Refusal: lease.Refusal{Reason: lease.RefusalRemoteOwner},
			Reclaimed: reclaimed},
			models.LeaseAcquireResult{Kind: models.LeaseAcquireRefused, Reason: models.RefusalRemoteOwner, Reclaimed: []string{"g1"}}, true},
		{"refused corrupt-epoch", lease.AcquireResult{Kind: lease.Refused, Refusal: lease.Refusal{Reason: lease.RefusalCorruptEpoch}},
			models.LeaseAcquireResult{Kind: models.LeaseAcquireRefused, Reason: models.RefusalCorruptEpoch}, true},
		{"refused with no model reason", lease.AcquireResult{Kind: lease.Refused, Refusal: lease.Refusal{Reason: lease.RefusalUnsafeNamespace}},
			models.LeaseAcquireResult{Kind: models.LeaseAcquireRefused, Reason: models.RefusalNone}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := LeaseAcquire(tc.result)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.ok, ok)
		})
	}
}

func TestLeaseReleaseInspectAndFence(t *testing.T) {
	got, ok := LeaseRelease(lease.ReleaseResult{Kind: lease.NotOwner, Owner: &lease.Owner{Generation: "g", SessionID: "s"}})
	require.True(t, ok)
	require.Equal(t, models.LeaseReleaseResult{Kind: models.LeaseNotOwner, OwnerGeneration: "g", OwnerSession: "s"}, got)
	_, ok = LeaseRelease(lease.ReleaseResult{Kind: lease.ReleaseRefused, Refusal: lease.Refusal{Reason: lease.RefusalUnsafeNamespace}})
	require.False(t, ok, "an unmapped release refusal")
	require.Equal(t, models.LeaseInspectResult{Kind: models.LeaseOwned, Generation: "g", Session: "s", Epoch: 3},
		LeaseInspect(lease.Projection{Kind: lease.Owned, Owner: lease.Owner{Generation: "g", SessionID: "s", Epoch: 3}}))
	ioError := errors.New("EIO")
	for _, tc := range []struct {
		entered bool
		err     error
		want    models.LeaseFenceKind
		known   bool
	}{
		{true, nil, models.FenceOK, true},
		{true, ioError, models.FenceOK, true}, // fn ran: the fence held, whatever came after
		{false, fmt.Errorf("wrapped: %w", &lease.FenceError{}), models.FenceFenced, true},
		{false, &lease.BusyError{}, models.FenceBusy, true},
		{false, &lease.UnverifiableError{}, models.FenceUnverifiable, true},
		{false, ioError, 0, false},
	} {
		got, known := LeaseFence(tc.entered, tc.err)
		require.Equal(t, tc.known, known, "%v %v", tc.entered, tc.err)
		require.Equal(t, tc.want, got.Kind, "%v %v", tc.entered, tc.err)
	}
}

func TestCASOutcomesOfBothEngines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mapped func(error) (models.CASKind, bool)
		err    error
		want   models.CASKind
		known  bool
	}{
		{"admission ok", AdmissionCAS, nil, models.CASOK, true},
		{"admission changed", AdmissionCAS, fmt.Errorf("x: %w", admission.ErrChanged), models.CASChanged, true},
		{"admission invalid", AdmissionCAS, admission.ErrInvalidTransition, models.CASInvalid, true},
		{"admission io", AdmissionCAS, errors.New("EIO"), 0, false},
		{"dirlease changed", DirCAS, dirlease.ErrChanged, models.CASChanged, true},
		{"dirlease invalid", DirCAS, dirlease.ErrInvalidTransition, models.CASInvalid, true},
		{"dirlease does not take admission's", DirCAS, admission.ErrChanged, 0, false},
	} {
		got, known := tc.mapped(tc.err)
		require.Equal(t, tc.known, known, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	out, known := AdmissionAcquire(nil, admission.ErrActive)
	require.True(t, known)
	require.Equal(t, models.AdmissionAcquireResult{Kind: models.AdmissionActive}, out)
	_, known = AdmissionAcquire(nil, errors.New("EIO"))
	require.False(t, known)
	require.Equal(t, models.DirPhase(0), DirPhase(""), "a bundle stage has no phase")
	require.Equal(t, models.PhaseHelperActive, AdmissionPhase(admission.PhaseHelperActive))
	require.Panics(t, func() { AdmissionPhase("bogus") })
}
