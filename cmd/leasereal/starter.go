package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"

	"github.com/leasekit/leasekit/leasecli"
)

// osStarter starts an engine-backed run's command (admission run,
// dirlease run) on the real OS: in leasereal's process group, with its
// standard streams, and a parent-death SIGKILL (childAttributes). Caught
// signals are drained, never forwarded, while the child runs (a Ctrl-C
// reaches it from the process group, as with flock); one caught before it
// started ends the run with 128+N and no child.
type osStarter struct{ signals <-chan os.Signal }

func (s osStarter) Start(command, env []string) (leasecli.Child, int, error) {
	if sig := pendingSignal(s.signals); sig != nil {
		code, err := interruption(sig)
		return nil, code, err
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = childAttributes()
	cmd.Env = append(os.Environ(), env...)
	// Pdeathsig follows the thread that forked: keep it locked until Wait
	// (the same goroutine waits: leasecli.RunRecorded).
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		runtime.UnlockOSThread()
		if errors.Is(err, os.ErrPermission) {
			return nil, 126, err
		}
		return nil, exitNoCommand, err
	}
	return &osChild{cmd: cmd, stopDraining: drainSignals(s.signals)}, 0, nil
}

// osChild is a started command, not yet reaped.
type osChild struct {
	cmd          *exec.Cmd
	stopDraining func()
}

func (c *osChild) PID() int              { return c.cmd.Process.Pid }
func (c *osChild) Exited() (bool, error) { return childExited(c.cmd.Process.Pid) }
func (c *osChild) Kill() error           { return c.cmd.Process.Kill() }

// Wait reaps the child: its code, 128+N when signal N killed it.
func (c *osChild) Wait(context.Context) (int, error) {
	err := c.cmd.Wait()
	c.stopDraining()
	runtime.UnlockOSThread()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exitErr):
		if exitErr.ExitCode() < 0 {
			return 128 + signalOf(exitErr), nil
		}
		return exitErr.ExitCode(), nil
	}
	return exitError, err
}

// engineRunExit is an engine-backed run's exit: the child's code, or the
// code of the step that failed (leasecli.RunError). A refused acquire
// exits with the engine's code for its refusal; a failed launching record
// is reported as the error it is (a read-only filesystem is a refusal).
func engineRunExit(code int, err error, engineCode func(error) int) error {
	var failed *leasecli.RunError
	if !errors.As(err, &failed) {
		return codeOrNil(code)
	}
	switch failed.Step {
	case leasecli.StepAcquire:
		return &codeError{code: engineCode(failed.Err), err: failed.Err}
	case leasecli.StepLaunch:
		return failed.Err
	case leasecli.StepStart, leasecli.StepWait:
		return &codeError{code: code, err: failed.Err}
	}
	return &codeError{code: exitError, err: failed.Err}
}
