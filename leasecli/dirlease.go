package leasecli

import (
	"context"
	"errors"
	"time"

	"github.com/leasekit/leasekit/dirlease"
)

// DirleaseRun is one `leasereal dirlease run`: the directory, the wait,
// the child's binding bound, and whom it tells. cmd/leasereal fills it
// from its flags on the real clock; the dirlease workload's simulated users
// fill it on their process's clock, so both run by the same code.
type DirleaseRun struct {
	// Path is the leased working directory (absolute, existing).
	Path string
	// RecoverAfter is how long a launching lease of a dead owner is
	// protected, from the Create.
	RecoverAfter time.Duration
	// Wait bounds the wait for a path another run holds (busy); 0 is one
	// attempt (busy at once). BusyPoll is the pause between attempts.
	Wait, BusyPoll time.Duration
	// Command and Env are the child's command line and its added
	// environment (the claim's ID is added as LEASEKIT_CLAIM_ID).
	Command, Env []string
	// BindAttempts and BindPause bound the captures of an exiting child
	// (Binding).
	BindAttempts int
	BindPause    time.Duration
	// Events, when set, are told each step as it happens.
	Events DirleaseEvents
}

// DirleaseEvents are told a run's steps as they happen: the simulator's
// ground truth follows them. Each may be nil.
type DirleaseEvents struct {
	// Busy: an attempt found the path held by another claim.
	Busy func()
	// Held: Create took the lease, after attempts attempts.
	Held func(held *dirlease.Lease, attempts int)
	// Running: the claim records child as running.
	Running func(child Child)
	// Settling: the run is about to settle; the record may no longer
	// surely name a child.
	Settling func()
	// Releasing: the run is about to release; Released: it did.
	Releasing, Released func()
}

// RunDirlease holds a raw-working lease on run.Path while a child runs in
// it: create (busy paths retried while run.Wait lasts), launching, start,
// running (the child's identity), wait, settled, release. It returns the
// child's exit code, and a *RunError naming the step that failed. A failed
// launching record releases the lease; once the command has started, the
// lease is settled and released whatever the command did.
func RunDirlease(ctx context.Context, config dirlease.Config, run DirleaseRun, starter Starter) (int, error) {
	held, err := createWaiting(ctx, config, run)
	if err != nil {
		return 0, &RunError{Step: StepAcquire, Err: err}
	}
	if err := held.Update(ctx, dirlease.PhaseLaunching, 0); err != nil {
		tell(run.Events.Releasing)
		return 0, &RunError{Step: StepLaunch, Err: errors.Join(err, held.Release(ctx))}
	}
	env := append(append([]string(nil), run.Env...), "LEASEKIT_CLAIM_ID="+held.Claim().ID)
	code, runErr := RunRecorded(ctx, starter, run.Command, env, Binding{
		Record: func(pid int) error {
			return held.Update(ctx, dirlease.PhaseRunning, pid)
		},
		NotCapturable: func(err error) bool { return errors.Is(err, dirlease.ErrChildIdentity) },
		Recorded:      run.Events.Running,
		Attempts:      run.BindAttempts, Pause: run.BindPause, Clock: config.Clock,
	})
	return code, dirleaseEnd(ctx, held, run.Events, runErr)
}

// dirleaseEnd settles and releases the lease after its command: the run's
// error is the first step that failed.
func dirleaseEnd(ctx context.Context, held *dirlease.Lease, events DirleaseEvents, runErr error) error {
	tell(events.Settling)
	if err := held.Update(ctx, dirlease.PhaseSettled, 0); err != nil {
		return &RunError{Step: StepSettle, Err: err}
	}
	tell(events.Releasing)
	if err := held.Release(ctx); err != nil {
		return &RunError{Step: StepRelease, Err: err}
	}
	tell(events.Released)
	return runErr
}

// createWaiting is Create on the path, tried again every BusyPoll while
// the path is busy (another claim names the directory) until Wait has
// passed, at most Wait/BusyPoll+2 times.
func createWaiting(ctx context.Context, config dirlease.Config, run DirleaseRun) (*dirlease.Lease, error) {
	if run.Wait > 0 && run.BusyPoll <= 0 {
		panic("leasecli: a DirleaseRun that waits needs a BusyPoll")
	}
	deadline := config.Clock.Now().Add(run.Wait)
	for attempt := int64(1); ; attempt++ {
		held, err := dirlease.Create(ctx, config, dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: run.Path,
			RecoverAfterMs: config.Clock.Now().Add(run.RecoverAfter).UnixMilli()})
		if err == nil && run.Events.Held != nil {
			run.Events.Held(held, int(attempt))
		}
		if !errors.Is(err, dirlease.ErrBusy) {
			return held, err
		}
		tell(run.Events.Busy)
		left := deadline.Sub(config.Clock.Now())
		if left <= 0 || attempt > int64(run.Wait/max(run.BusyPoll, 1))+1 {
			return held, err
		}
		if sleepErr := config.Clock.Sleep(ctx, min(run.BusyPoll, left)); sleepErr != nil {
			return nil, errors.Join(err, sleepErr)
		}
	}
}

// tell calls event when it is set.
func tell(event func()) {
	if event != nil {
		event()
	}
}
