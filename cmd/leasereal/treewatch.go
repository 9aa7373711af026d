package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
)

// treePollsMax bounds the polls of a command tree that outlived its
// wrapper (at waitBackoffMax apart: about six days).
const treePollsMax = 1 << 20

// runEnv is what run's acquire reads besides the lease (leasecli.Env): this
// process, the real process table and process groups, the real
// filesystem. A lease whose recorded run was killed while its command's
// descendants still run in its process group stays held until they exit.
func runEnv() (leasecli.Env, error) {
	inspector := osenv.NewInspector()
	self, err := inspector.Current()
	if err != nil {
		return leasecli.Env{}, err
	}
	return leasecli.Env{Self: self, Inspector: inspector, Groups: commandGroups(), FS: osenv.NewFS()}, nil
}

// acquireForRun is run's acquire (leasecli.AcquireRun, the code the
// simulated wrappers run too) on the real clock, ended early by a caught
// signal: its context is cancelled, its pause cut short, and a lease it
// acquired is released before it returns 128+N. The owner is returned only
// when acquired and no killed run's tree holds the lease any more; a
// holder that stayed is the conflict code, a refusal exit 3 (gaveUp).
func acquireForRun(manager *lease.Manager, request lease.AcquireRequest, f runFlags, signals <-chan os.Signal, stderr io.Writer) (lease.Owner, error) {
	env, err := runEnv()
	if err != nil {
		return lease.Owner{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	interrupted := make(chan os.Signal, 1)
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case sig := <-signals:
			interrupted <- sig
			cancel()
		case <-ctx.Done():
		}
	}()
	result, tree, err := leasecli.AcquireRun(ctx, manager, request, env, leasecli.RunWait{Timeout: f.wait,
		BackoffMin: waitBackoffMin, BackoffMax: waitBackoffMax, Clock: osenv.NewClock(),
		TreePoll: waitBackoffMax, TreePollsMax: treePollsMax,
		Waiting: waitNotice(manager.Namespace(), f, stderr), Holding: holdingNotice(stderr)})
	cancel()
	<-watcherDone
	select {
	case sig := <-interrupted:
		if result.Kind == lease.Acquired {
			releaseAfter(manager, result.Owner, fmt.Errorf("%v", sig), stderr)
		}
		return lease.Owner{}, interruptedError(sig)
	default:
	}
	if err != nil {
		reportReclaims(result, stderr)
		if result.Kind == lease.Acquired {
			releaseAfter(manager, result.Owner, err, stderr)
		}
		return lease.Owner{}, err
	}
	reportAcquire(manager.Namespace(), result, f, stderr)
	if result.Kind == lease.Acquired {
		return result.Owner, nil
	}
	return lease.Owner{}, gaveUp(manager.Namespace(), result, tree, f, stderr)
}

// holdingNotice says, once, that the acquired lease waits for the tree of
// a killed run before the command starts.
func holdingNotice(stderr io.Writer) func(leasecli.TreeVerdict) {
	return func(tree leasecli.TreeVerdict) {
		fmt.Fprintf(stderr, "leasereal: %s; holding the lease until it exits\n", tree.Why)
	}
}

// releaseAfter releases a lease the run will not use, reporting a failure.
func releaseAfter(manager *lease.Manager, owner lease.Owner, cause error, stderr io.Writer) {
	if _, err := manager.Release(context.Background(), owner.Generation); err != nil {
		fmt.Fprintf(stderr, "leasereal: releasing %s after %v: %v\n", manager.Namespace(), cause, err)
	}
}
