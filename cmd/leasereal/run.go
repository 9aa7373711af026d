package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
)

// Environment variables exported to the child of `run`.
const (
	envGeneration = "LEASEKIT_GENERATION"
	envEpoch      = "LEASEKIT_EPOCH"
	envNamespace  = "LEASEKIT_NAMESPACE"
)

// Backoff between acquire attempts while `run -w` waits for a holder.
const (
	waitBackoffMin = 10 * time.Millisecond
	waitBackoffMax = 500 * time.Millisecond
)

// runFlags are `run`'s options (runopts.go parses them).
type runFlags struct {
	common          leaseFlags
	noWait          bool
	wait            time.Duration
	conflictCode    int
	jsonOut         bool
	verbose         bool
	closeBeforeExec bool
	help            bool
	sessionID       string
	sessionFile     string
}

// cmdRun acquires the lease for this process, runs the command while
// holding it, releases it when the command ends (whatever its status), and
// exits with the command's code. If leasereal itself is killed, the owner
// it recorded is dead and the next acquire reclaims the lease.
//
// Signals, as flock(1): none is forwarded. The child runs in leasereal's
// process group, so a Ctrl-C, a hangup or a kill of the group reaches it
// directly (forwarding too would deliver it twice). leasereal catches
// SIGINT, SIGTERM, SIGHUP and SIGQUIT, so that it outlives the child and
// releases the lease, except those it inherited ignored (nohup, a
// background job): those stay ignored, for leasereal and for the child.
// A caught signal before the child started ends the run with 128+N.
func cmdRun(args []string, stdout, stderr io.Writer) error {
	f, command, err := parseRunArgs(args)
	var usage *usageError
	if errors.As(err, &usage) {
		usage.usage = runUsage
	}
	if err != nil {
		return err
	}
	if f.help {
		_, err := fmt.Fprint(stdout, runUsage)
		return err
	}
	signals, stopSignals := watchSignals()
	defer stopSignals()
	manager, refusal, err := f.common.open(osenv.NewInspector())
	if err != nil {
		return err
	}
	if !refusal.IsZero() {
		if f.jsonOut {
			writeJSONLine(stderr, map[string]any{"acquire": acquireJSON{Result: "refused",
				Namespace: manager.Namespace(), Reclaimed: []reclaimJSON{}, Refusal: refusalOf(manager.Namespace(), refusal)}})
		}
		return refusedError(manager.Namespace(), refusal)
	}
	if err := leadCommandTree(); err != nil {
		return err
	}
	request := defaultRequest(manager.Namespace(), os.Getpid(), f.sessionID, f.sessionFile)
	started := time.Now()
	owner, err := acquireForRun(manager, request, f, signals, stderr)
	if err != nil {
		return err
	}
	if f.verbose {
		took := time.Since(started)
		fmt.Fprintf(stderr, "leasereal: getting the lease took %d.%06d seconds\n", took/time.Second, took%time.Second/time.Microsecond)
		fmt.Fprintf(stderr, "leasereal: executing %s\n", describeCommand(command))
	}
	code, runErr := runChild(command, owner, manager.Namespace(), signals)
	if err := waitDescendants(); err != nil && runErr == nil {
		runErr = err
		code = exitError
	}
	released, releaseErr := manager.Release(context.Background(), owner.Generation)
	if f.jsonOut {
		writeJSONLine(stderr, map[string]any{"release": releaseOf(manager.Namespace(), released)})
	}
	if err := releaseOutcome(manager.Namespace(), owner, released, releaseErr, code, runErr); err != nil {
		return err
	}
	if runErr != nil {
		return &codeError{code: code, err: runErr}
	}
	return codeOrNil(code)
}

// caughtSignals are the signals leasereal outlives while it holds a lease.
var caughtSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// watchSignals catches caughtSignals, except those this process inherited
// ignored: the Go runtime keeps an inherited SIG_IGN for SIGHUP and SIGINT
// (until signal.Notify asks for them), and exec passes it on, so `nohup
// leasereal run` and a background job keep their ignore for the child too.
// (The runtime does not report an inherited ignore of SIGTERM or SIGQUIT:
// those are caught whatever leasereal inherited, and the child starts with
// the default action for them; docs/LEASEREAL.md.)
func watchSignals() (<-chan os.Signal, func()) {
	signals := make(chan os.Signal, 8)
	for _, sig := range caughtSignals {
		if !signal.Ignored(sig) {
			signal.Notify(signals, sig)
		}
	}
	return signals, func() { signal.Stop(signals) }
}

// interruptedError is a caught signal that ended the run before its child
// started: exit 128+N, as a shell reports a process that signal N killed.
func interruptedError(sig os.Signal) error {
	code, err := interruption(sig)
	return &codeError{code: code, err: err}
}

// interruption is interruptedError's exit code and error.
func interruption(sig os.Signal) (int, error) {
	return 128 + int(sig.(syscall.Signal)), fmt.Errorf("interrupted by %v before the command started", sig)
}

// waitNotice is --verbose's line when a wait begins: who holds the lease
// (a live holder, a killed run's tree, or its guard), or which refusal a
// retry may resolve, said once.
func waitNotice(namespace string, f runFlags, stderr io.Writer) func(lease.AcquireResult, leasecli.TreeVerdict) {
	if !f.verbose {
		return nil
	}
	said := false
	return func(result lease.AcquireResult, tree leasecli.TreeVerdict) {
		if said {
			return
		}
		said = true
		holder := "its lifecycle guard is busy"
		switch {
		case tree.Runs:
			holder = tree.Why
		case result.Kind == lease.Held:
			holder = fmt.Sprintf("held by pid %d (epoch %d)", result.Owner.PID, result.Owner.Epoch)
		case result.Refusal.Reason != lease.RefusalLifecycleBusy:
			holder = fmt.Sprintf("%s, which a retry may resolve: %s", result.Refusal.Reason, result.Refusal.Diagnostic)
		}
		fmt.Fprintf(stderr, "leasereal: waiting up to %v for %s: %s\n", f.wait, namespace, holder)
	}
}

// reportAcquire prints the acquire's JSON line (--json: its last attempt,
// with the reclaims of every attempt) and its reclaims.
func reportAcquire(namespace string, result lease.AcquireResult, f runFlags, stderr io.Writer) {
	if f.jsonOut {
		writeJSONLine(stderr, map[string]any{"acquire": acquireOf(namespace, result)})
	}
	reportReclaims(result, stderr)
}

// reportReclaims prints every stale owner the acquire moved into quarantine.
func reportReclaims(result lease.AcquireResult, stderr io.Writer) {
	for _, reclaim := range result.Reclaimed {
		fmt.Fprintf(stderr, "leasereal: reclaimed the stale owner pid %d (generation %s, epoch %d): %s; its record is in %s\n",
			reclaim.Owner.PID, reclaim.Owner.Generation, reclaim.Owner.Epoch, reclaim.Reason, reclaim.QuarantinePath)
	}
}

// gaveUp is the error of a run whose lease stayed held (by a live holder,
// or by a killed run's command tree), or whose last attempt was refused,
// when the wait ended: the conflict code for a holder, as flock; exit 3 for
// a refusal.
func gaveUp(namespace string, last lease.AcquireResult, tree leasecli.TreeVerdict, f runFlags, stderr io.Writer) error {
	if last.Kind == lease.Refused {
		return refusedError(namespace, last.Refusal)
	}
	if f.verbose {
		what := "failed to get the lease"
		if f.wait > 0 {
			what = "timeout while waiting to get the lease"
		}
		holder := fmt.Sprintf("held by pid %d (generation %s, epoch %d)", last.Owner.PID, last.Owner.Generation, last.Owner.Epoch)
		if tree.Runs {
			holder = "held: " + tree.Why
		}
		fmt.Fprintf(stderr, "leasereal: %s: %s is %s\n", what, namespace, holder)
	}
	return &codeError{code: f.conflictCode}
}

func writeJSONLine(out io.Writer, value any) {
	data, err := json.Marshal(value)
	if err != nil {
		panic("leasereal: " + err.Error())
	}
	fmt.Fprintf(out, "%s\n", data)
}

// runChild runs the command with the lease exported in its environment, in
// leasereal's process group, and returns its exit code: its own, 128+N when
// signal N killed it, 126/127 when it could not start (then err says why).
// Caught signals are drained while it runs and never forwarded (cmdRun).
func runChild(command []string, owner lease.Owner, namespace string, signals <-chan os.Signal) (int, error) {
	child := exec.Command(command[0], command[1:]...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	child.SysProcAttr = childAttributes()
	child.Env = append(os.Environ(), envGeneration+"="+owner.Generation,
		envEpoch+"="+strconv.FormatUint(owner.Epoch, 10), envNamespace+"="+namespace)
	// Pdeathsig follows the thread that forked: keep it alive until Wait.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := child.Start(); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return 126, err
		}
		return exitNoCommand, err
	}
	stopDraining := drainSignals(signals)
	err := child.Wait()
	stopDraining()
	if err == nil {
		return 0, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return exitError, err
	}
	if number := signalOf(exitErr); number != 0 {
		return 128 + number, nil
	}
	return exitErr.ExitCode(), nil
}

// drainSignals consumes caught signals while a child runs, forwarding
// none (the child has its own copy, from the process group, as with
// flock), until the returned stop is called.
func drainSignals(signals <-chan os.Signal) (stop func()) {
	done := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-signals:
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-drained
	}
}

// pendingSignal returns a signal caught before a child started, or nil.
func pendingSignal(signals <-chan os.Signal) os.Signal {
	select {
	case sig := <-signals:
		return sig
	default:
		return nil
	}
}

// signalOf returns the number of the signal that killed a child.
func signalOf(exitErr *exec.ExitError) int {
	status, ok := exitErr.Sys().(syscall.WaitStatus)
	if !ok || !status.Signaled() {
		return 0
	}
	return int(status.Signal())
}

// releaseOutcome is run's exit after its command when the release did not
// release: the command's code would hide that the lease was not held to
// the end, so the run exits with its own code, never the child's and never
// 0. A release that found another owner, or none, means the lease was lost
// while the command ran (exitLeaseLost: an operator forced it, or the run
// was judged dead); a refused or failed release leaves this run's record
// in place (exitReleaseRefused: the next run reclaims it once leasereal has
// exited, or an operator resolves the refusal). nil when released.
func releaseOutcome(namespace string, owner lease.Owner, released lease.ReleaseResult, releaseErr error, childCode int, runErr error) error {
	if releaseErr == nil && released.Kind == lease.Released {
		return nil
	}
	command := fmt.Sprintf("the command exited %d", childCode)
	if runErr != nil {
		command = fmt.Sprintf("the command failed: %v", runErr)
	}
	switch {
	case releaseErr != nil:
		return &codeError{code: exitReleaseRefused, err: fmt.Errorf("releasing %s failed after the command (%s): %w; the lease is stale once leasereal exits and the next run reclaims it",
			namespace, command, releaseErr)}
	case released.Kind == lease.NotOwner:
		return &codeError{code: exitLeaseLost, err: fmt.Errorf("the lease on %s was lost while the command ran (%s): generation %s is not the owner: %s",
			namespace, command, owner.Generation, released.Why)}
	default:
		return &codeError{code: exitReleaseRefused, err: fmt.Errorf("the release of %s was refused after the command (%s): %s%s; this run's record stays until an operator resolves it",
			namespace, command, released.Why, released.Refusal.Diagnostic)}
	}
}
