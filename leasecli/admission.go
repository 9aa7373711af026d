package leasecli

import (
	"context"
	"errors"
	"time"

	"github.com/leasekit/leasekit/admission"
)

// AdmissionRun is one `leasereal admission run`: the command, the child's
// binding bound, and whom it tells. cmd/leasereal fills it on the real
// clock; the admission workload's simulated users fill it on their
// process's clock, so both run by the same code.
type AdmissionRun struct {
	// Command and Env are the helper's command line and its added
	// environment (the claim's ID is added as LEASEKIT_CLAIM_ID).
	Command, Env []string
	// BindAttempts and BindPause bound the captures of an exiting helper
	// (Binding).
	BindAttempts int
	BindPause    time.Duration
	// Events, when set, are told each step as it happens.
	Events AdmissionEvents
}

// AdmissionEvents are told a run's steps as they happen. Each may be nil.
type AdmissionEvents struct {
	// Held: Acquire took the slot.
	Held func(held *admission.Admission)
	// Running: the record names child as the active helper.
	Running func(child Child)
	// SettleFailed: the settle failed, and the run marks cleanup unsafe
	// (err is the settle's).
	SettleFailed func(err error)
	// Releasing: the run is about to release; Released: it did.
	Releasing, Released func()
}

// RunAdmission holds the admission while a helper child runs: acquire,
// helper-launching, start, helper-active (the child's identity), wait,
// parent-owned, release. It returns the child's exit code, and a
// *RunError naming the step that failed. A failed launching record
// releases the slot; a failed settle marks cleanup unsafe (the record then
// waits for a reboot or an operator), since the helper's end is no longer
// what the record says.
func RunAdmission(ctx context.Context, config admission.Config, run AdmissionRun, starter Starter) (int, error) {
	held, err := admission.Acquire(ctx, config)
	if err != nil {
		return 0, &RunError{Step: StepAcquire, Err: err}
	}
	if run.Events.Held != nil {
		run.Events.Held(held)
	}
	if err := held.BeginHelperLaunch(ctx); err != nil {
		tell(run.Events.Releasing)
		return 0, &RunError{Step: StepLaunch, Err: errors.Join(err, held.Release(ctx))}
	}
	env := append(append([]string(nil), run.Env...), "LEASEKIT_CLAIM_ID="+held.Claim().ID)
	code, runErr := RunRecorded(ctx, starter, run.Command, env, Binding{
		Record:        func(pid int) error { return held.BindHelper(ctx, pid) },
		NotCapturable: func(err error) bool { return errors.Is(err, admission.ErrHelperIdentity) },
		Recorded:      run.Events.Running,
		Attempts:      run.BindAttempts, Pause: run.BindPause, Clock: config.Clock,
	})
	return code, admissionEnd(ctx, held, run.Events, runErr)
}

// admissionEnd settles and releases the slot after its helper: the run's
// error is the first step that failed.
func admissionEnd(ctx context.Context, held *admission.Admission, events AdmissionEvents, runErr error) error {
	if err := held.Settle(ctx); err != nil {
		if events.SettleFailed != nil {
			events.SettleFailed(err)
		}
		return &RunError{Step: StepSettle, Err: errors.Join(err, held.MarkCleanupUnsafe(ctx))}
	}
	tell(events.Releasing)
	if err := held.Release(ctx); err != nil {
		return &RunError{Step: StepRelease, Err: err}
	}
	tell(events.Released)
	return runErr
}
