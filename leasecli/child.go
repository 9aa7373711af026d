package leasecli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// Child is a command a run started, as the run sees it: the process
// interface the run's logic needs, implemented on the real OS by
// cmd/leasereal (exec, waitid) and in the simulator by the workloads (a
// simulated process). The run records the child's PID in its claim, so a
// PID must stay the child's until Wait: an unreaped child's PID is never
// reused.
type Child interface {
	// PID is the child's process ID.
	PID() int
	// Exited reports, without reaping the child, whether it has exited.
	Exited() (bool, error)
	// Wait waits for the child's exit, reaps it, and returns its exit
	// code: its own, or 128+N when signal N killed it.
	Wait(ctx context.Context) (int, error)
	// Kill ends the child at once (SIGKILL).
	Kill() error
}

// Starter starts a run's command as its child, with env (NAME=VALUE)
// added to the child's environment. A start that fails returns the exit
// code the run reports for it (126 not executable, 127 not found, 128+N
// when a caught signal ended the run before its command started).
type Starter interface {
	Start(command []string, env []string) (Child, int, error)
}

// Binding records a started child in the engine's record: Record records
// pid; NotCapturable says that Record failed because the child's identity
// could not be captured (it may have exited already, or be exiting).
type Binding struct {
	Record        func(pid int) error
	NotCapturable func(error) bool
	// Recorded, when set, is told the child once Record has recorded it.
	Recorded func(child Child)
	// Attempts bounds the captures tried while the child is neither
	// capturable nor exited (its memory released, not yet a zombie), Pause
	// apart on Clock.
	Attempts int
	Pause    time.Duration
	Clock    lease.Clock
}

// RunStep names the step of a run that failed, which decides its exit.
type RunStep string

// The steps of an engine-backed run (admission run, dirlease run).
const (
	// StepAcquire: the engine refused or failed to take the lease; Err is
	// the engine's.
	StepAcquire RunStep = "acquire"
	// StepLaunch: the launching record failed, and the lease was released.
	StepLaunch RunStep = "launch"
	// StepStart: the command could not start; the run's Code says why.
	StepStart RunStep = "start"
	// StepRecord: the started command could not be recorded, and was
	// killed: the record must never claim less than what runs.
	StepRecord RunStep = "record"
	// StepWait: waiting for the command failed.
	StepWait RunStep = "wait"
	// StepSettle and StepRelease: the lease's end failed after the
	// command.
	StepSettle  RunStep = "settle"
	StepRelease RunStep = "release"
)

// RunError is a run's failure at Step.
type RunError struct {
	Step RunStep
	Err  error
}

func (e *RunError) Error() string { return fmt.Sprintf("%s: %v", e.Step, e.Err) }
func (e *RunError) Unwrap() error { return e.Err }

// RunRecorded starts command, records it with binding, and waits for it,
// returning its exit code. A child that exits before it is recorded (a
// short command: `true`) is not an error: unreaped, its PID cannot be
// reused, and Exited proves it exited; the record then stays as it was
// (launching) and the caller settles it, as after any exit. A child that
// cannot be recorded while it runs is killed and reaped. A failure is a
// *RunError (StepStart, StepRecord or StepWait).
func RunRecorded(ctx context.Context, starter Starter, command, env []string, binding Binding) (int, error) {
	child, code, err := starter.Start(command, env)
	if err != nil {
		return code, &RunError{Step: StepStart, Err: err}
	}
	recorded, err := record(ctx, child, binding)
	if err != nil {
		_ = child.Kill()
		code, _ := child.Wait(ctx)
		return code, &RunError{Step: StepRecord, Err: err}
	}
	if recorded && binding.Recorded != nil {
		binding.Recorded(child)
	}
	code, err = child.Wait(ctx)
	if err != nil {
		return code, &RunError{Step: StepWait, Err: err}
	}
	return code, nil
}

// record records the unreaped child (true), or proves that it exited
// first (false); it retries, bounded, a capture that failed while the
// child was still exiting.
func record(ctx context.Context, child Child, binding Binding) (bool, error) {
	if binding.Attempts < 1 || binding.Clock == nil {
		panic("leasecli: a Binding needs Attempts and a Clock")
	}
	var err error
	for attempt := range binding.Attempts {
		if err = binding.Record(child.PID()); err == nil || !binding.NotCapturable(err) {
			return err == nil, err
		}
		exited, exitErr := child.Exited()
		if exitErr != nil {
			return false, errors.Join(err, exitErr)
		}
		if exited {
			return false, nil
		}
		if attempt+1 < binding.Attempts {
			if err := binding.Clock.Sleep(ctx, binding.Pause); err != nil {
				return false, err
			}
		}
	}
	return false, err
}
