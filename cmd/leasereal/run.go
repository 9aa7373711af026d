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
)

// Environment variables exported to the child of `run`.
const (
	envGeneration = "LEASEKIT_GENERATION"
	envEpoch      = "LEASEKIT_EPOCH"
	envNamespace  = "LEASEKIT_NAMESPACE"
)

// Backoff between acquire attempts while `run --wait` waits for a holder.
const (
	waitBackoffMin = 10 * time.Millisecond
	waitBackoffMax = 500 * time.Millisecond
)

// runFlags are `run`'s options.
type runFlags struct {
	common       leaseFlags
	noWait       bool
	wait         time.Duration
	waitSeconds  float64
	conflictCode int
	jsonOut      bool
	verbose      bool
	sessionID    string
	sessionFile  string
}

func parseRun(args []string) (runFlags, []string, error) {
	flags := newFlagSet("run")
	var f runFlags
	f.common.register(flags)
	flags.BoolVar(&f.noWait, "n", false, "fail at once when the lease is held (the default, as flock -n)")
	flags.BoolVar(&f.noWait, "nonblock", false, "same as -n")
	flags.DurationVar(&f.wait, "wait", 0, "wait up to this long for a holder to go away")
	flags.Float64Var(&f.waitSeconds, "w", 0, "wait up to this many seconds (as flock -w)")
	flags.IntVar(&f.conflictCode, "conflict-exit-code", exitConflict, "exit code when the lease stays held (as flock -E)")
	flags.IntVar(&f.conflictCode, "E", exitConflict, "same as --conflict-exit-code")
	flags.BoolVar(&f.jsonOut, "json", false, "print the acquire and release results as JSON lines on stderr")
	flags.BoolVar(&f.verbose, "verbose", false, "say on stderr when the lease is held")
	flags.StringVar(&f.sessionID, "session-id", "", "session ID to record (default leasereal-<pid>)")
	flags.StringVar(&f.sessionFile, "session-file", "", "absolute session file to record (default <dir>/leasereal.session)")
	if err := parseFlags(flags, args); err != nil {
		return f, nil, err
	}
	rest := flags.Args()
	if f.common.dir == "" {
		if len(rest) == 0 {
			return f, nil, usagef("run needs --dir D or a directory argument")
		}
		f.common.dir, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		return f, nil, usagef("run needs a command")
	case f.wait < 0 || f.waitSeconds < 0:
		return f, nil, usagef("a wait must not be negative")
	case f.conflictCode < 0 || f.conflictCode > 255:
		return f, nil, usagef("--conflict-exit-code must be 0..255")
	}
	if f.waitSeconds > 0 {
		f.wait = time.Duration(f.waitSeconds * float64(time.Second))
	}
	if f.noWait {
		f.wait = 0
	}
	return f, rest, nil
}

// cmdRun acquires the lease for this process, runs the command while
// holding it, releases it when the command ends (whatever its status), and
// exits with the command's code. If leasereal itself is killed, the owner
// it recorded is dead and the next acquire reclaims the lease.
func cmdRun(args []string, stderr io.Writer) error {
	f, command, err := parseRun(args)
	if err != nil {
		return err
	}
	manager, err := f.common.manager(osenv.NewInspector())
	if err != nil {
		return err
	}
	request := defaultRequest(manager.Namespace(), os.Getpid(), f.sessionID, f.sessionFile)
	owner, err := acquireWaiting(manager, request, f, stderr)
	if err != nil {
		return err
	}
	code, runErr := runChild(command, owner, manager.Namespace())
	released, releaseErr := manager.Release(context.Background(), owner.Generation)
	if f.jsonOut {
		writeJSONLine(stderr, map[string]any{"release": releaseOf(manager.Namespace(), released)})
	}
	switch {
	case releaseErr != nil && released.Kind != lease.Released:
		fmt.Fprintf(stderr, "leasereal: releasing %s failed (the lease is stale once leasereal exits and the next run reclaims it): %v\n", manager.Namespace(), releaseErr)
	case released.Kind != lease.Released:
		fmt.Fprintf(stderr, "leasereal: release of generation %s: %s %s%s\n", owner.Generation, released.Kind, released.Why, released.Refusal.Diagnostic)
	}
	if runErr != nil {
		return &codeError{code: code, err: runErr}
	}
	return codeOrNil(code)
}

// acquireWaiting acquires, retrying while the lease is held or the guard
// busy until the wait ends; the attempts are bounded by the wait too.
func acquireWaiting(manager *lease.Manager, request lease.AcquireRequest, f runFlags, stderr io.Writer) (lease.Owner, error) {
	deadline := time.Now().Add(f.wait)
	attemptsMax := 2 + int(f.wait/waitBackoffMin)
	backoff := waitBackoffMin
	for attempt := 1; ; attempt++ {
		result, err := manager.Acquire(context.Background(), request)
		if err != nil {
			return lease.Owner{}, err
		}
		if f.jsonOut {
			writeJSONLine(stderr, map[string]any{"acquire": acquireOf(manager.Namespace(), result)})
		}
		for _, reclaim := range result.Reclaimed {
			fmt.Fprintf(stderr, "leasereal: reclaimed the stale owner pid %d (generation %s, epoch %d): %s; its record is in %s\n",
				reclaim.Owner.PID, reclaim.Owner.Generation, reclaim.Owner.Epoch, reclaim.Reason, reclaim.QuarantinePath)
		}
		retryable := result.Kind == lease.Held ||
			(result.Kind == lease.Refused && result.Refusal.Reason == lease.RefusalLifecycleBusy)
		switch {
		case result.Kind == lease.Acquired:
			return result.Owner, nil
		case !retryable:
			return lease.Owner{}, &codeError{code: exitRefused, err: fmt.Errorf("%s: %v", manager.Namespace(), result.Refusal)}
		case attempt >= attemptsMax || !time.Now().Before(deadline):
			if result.Kind == lease.Refused {
				return lease.Owner{}, &codeError{code: exitRefused, err: fmt.Errorf("%s: %v", manager.Namespace(), result.Refusal)}
			}
			if f.verbose {
				fmt.Fprintf(stderr, "leasereal: %s is held by pid %d (generation %s, epoch %d)\n",
					manager.Namespace(), result.Owner.PID, result.Owner.Generation, result.Owner.Epoch)
			}
			return lease.Owner{}, &codeError{code: f.conflictCode}
		}
		time.Sleep(min(backoff, time.Until(deadline)))
		backoff = min(2*backoff, waitBackoffMax)
	}
}

func writeJSONLine(out io.Writer, value any) {
	data, err := json.Marshal(value)
	if err != nil {
		panic("leasereal: " + err.Error())
	}
	fmt.Fprintf(out, "%s\n", data)
}

// runChild runs the command with the lease exported in its environment,
// forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT to it, and returns its
// exit code: its own, 128+N when signal N killed it, 126/127 when it could
// not start (then err says why).
func runChild(command []string, owner lease.Owner, namespace string) (int, error) {
	child := exec.Command(command[0], command[1:]...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	child.SysProcAttr = childAttributes()
	child.Env = append(os.Environ(), envGeneration+"="+owner.Generation,
		envEpoch+"="+strconv.FormatUint(owner.Epoch, 10), envNamespace+"="+namespace)
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(signals)
	// Pdeathsig follows the thread that forked: keep it alive until Wait.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := child.Start(); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return 126, err
		}
		return exitNoCommand, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-signals:
				_ = child.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err := child.Wait()
	close(done)
	if err == nil {
		return 0, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return exitError, err
	}
	status, ok := exitErr.Sys().(syscall.WaitStatus)
	if ok && status.Signaled() {
		return 128 + int(status.Signal()), nil
	}
	return exitErr.ExitCode(), nil
}

// signalOf returns the number of the signal that killed a child.
func signalOf(exitErr *exec.ExitError) int {
	status, ok := exitErr.Sys().(syscall.WaitStatus)
	if !ok || !status.Signaled() {
		return 0
	}
	return int(status.Signal())
}
