package leasecli

import (
	"context"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// RunWait is how `leasereal run` waits for its lease: for how long, with
// which pauses, on which clock, and whom it tells. cmd/leasereal fills it
// from -n/-w on the real clock; the simulated wrappers fill it on their
// process's clock, so both wait by the same code.
type RunWait struct {
	// Timeout bounds the wait for a held lease (or a refusal a retry may
	// resolve, Retryable), measured on Clock.Monotonic; 0 is one attempt
	// (-n). The wait for a reclaimed tree after the acquire ignores it:
	// giving up then would free the lease while the tree runs.
	Timeout time.Duration
	// BackoffMin is the first pause, doubled after each attempt up to
	// BackoffMax (lease.WaitOptions: 0 means lease's defaults).
	BackoffMin, BackoffMax time.Duration
	// Clock measures the wait and sleeps its pauses; a done ctx ends them.
	Clock lease.Clock
	// TreePoll is the pause between two looks at a reclaimed tree the
	// acquired lease waits for, and TreePollsMax their bound.
	TreePoll     time.Duration
	TreePollsMax int
	// Waiting, when set, is told each result the run is about to wait on,
	// with the tree that holds the lease when a tree does.
	Waiting func(result lease.AcquireResult, tree TreeVerdict)
	// Holding, when set, is told once that the acquired lease waits for a
	// reclaimed tree before the command starts.
	Holding func(tree TreeVerdict)
}

// AcquireRun is run's acquire: AcquireOnce, waited on by lease.WaitFor's
// rules until it acquires, returns a result a wait cannot resolve
// (Retryable), or the wait is over; then, when the acquire took the lease
// from an owner whose tree still runs (or another run did, into
// quarantine/, while this one waited), it holds the lease without starting
// the command until that tree is gone. The last attempt's result is
// returned, with the reclaims of every attempt; its TreeVerdict says which
// tree held the lease when a tree did. An error after the acquire leaves
// the lease acquired: the caller releases it.
func AcquireRun(ctx context.Context, m *lease.Manager, req lease.AcquireRequest, env Env, wait RunWait) (lease.AcquireResult, TreeVerdict, error) {
	if wait.Clock == nil {
		panic("leasecli: RunWait needs a Clock")
	}
	var tree TreeVerdict // the last attempt's
	opts := lease.WaitOptions{Timeout: wait.Timeout, BackoffMin: wait.BackoffMin, BackoffMax: wait.BackoffMax, Retry: Retryable}
	if wait.Waiting != nil {
		opts.Waiting = func(result lease.AcquireResult) { wait.Waiting(result, tree) }
	}
	result, err := lease.WaitFor(ctx, wait.Clock, opts, func(ctx context.Context) (lease.AcquireResult, error) {
		result, verdict, err := AcquireOnce(ctx, m, req, env)
		tree = verdict
		return result, err
	})
	if err != nil || result.Kind != lease.Acquired || !tree.Runs {
		return result, tree, err
	}
	return result, tree, holdWhileTreeRuns(ctx, result, m.Namespace(), env, wait, tree)
}

// holdWhileTreeRuns polls AcquiredTreeRuns until the tree that still holds
// the just-acquired lease is gone, at most TreePollsMax times.
func holdWhileTreeRuns(ctx context.Context, result lease.AcquireResult, namespace string, env Env, wait RunWait, tree TreeVerdict) error {
	if wait.Holding != nil {
		wait.Holding(tree)
	}
	for range wait.TreePollsMax {
		if err := wait.Clock.Sleep(ctx, wait.TreePoll); err != nil {
			return err
		}
		verdict, err := AcquiredTreeRuns(result, namespace, env)
		if err != nil || !verdict.Runs {
			return err
		}
	}
	return fmt.Errorf("leasecli: the command tree holding %s outlived %d polls: %s", namespace, wait.TreePollsMax, tree.Why)
}
