package leasecli

import (
	"context"

	"github.com/leasekit/leasekit/lease"
)

// Env is what run's acquire reads besides the lease: the caller's own
// identity, its view of the process table, its process groups, and the
// filesystem the lease lives on (for the records in quarantine/).
type Env struct {
	Self      lease.ProcessIdentity
	Inspector lease.Inspector
	Groups    Groups
	FS        lease.FS
}

// HeldByTree judges, before an acquire, every command tree that may still
// hold the lease: the recorded owner's (when the owner is gone), then
// those of the owners the engine reclaimed into quarantine/
// (QuarantinedTreeRuns). Runs is true when one still runs; owner is the
// record whose tree it is.
func HeldByTree(projection lease.Projection, namespace string, env Env) (lease.Owner, TreeVerdict, error) {
	if projection.Kind == lease.Owned {
		verdict, err := HolderTreeRuns(projection.Owner, env.Self, env.Inspector, env.Groups)
		if err != nil || verdict.Runs {
			return projection.Owner, verdict, err
		}
	}
	return QuarantinedTreeRuns(env.FS, namespace, env.Self, env.Inspector, env.Groups)
}

// Retryable reports whether a run that waits (`run -w`) tries again after
// result: the lease is held, or the engine refused with no human state,
// which lease.HumanState documents as a state waiting or retrying may
// resolve (its guard busy; an inspection of the owner or of the guard's
// holder that failed with EACCES; an owner caught while it exits, whose
// /proc/PID/exe is gone before it is a zombie). A refusal that names a
// human state ends the wait: only an operator resolves it.
func Retryable(result lease.AcquireResult) bool {
	switch result.Kind {
	case lease.Held:
		return true
	case lease.Refused:
		return result.Refusal.Human == lease.HumanNone
	}
	return false
}

// AcquireOnce is one acquire attempt of `leasereal run`: a lease whose
// dead owner's command tree still runs, or that the engine took from an
// owner whose tree still runs (its record is in quarantine/), is Held
// (the result's Owner is that record, the returned TreeVerdict says why),
// and is not reclaimed. The engine judges the rest.
//
// A wrapper that dies between the tree check and the engine's judgement
// is reclaimed by the engine; on an Acquired result the returned
// TreeVerdict then names the reclaimed owner's group if it still runs (or
// the group of an owner in quarantine/ that another run reclaimed
// meanwhile), and the caller holds the lease without starting its command
// until that group is gone (asking AcquiredTreeRuns again until its
// verdict does not Run).
func AcquireOnce(ctx context.Context, m *lease.Manager, req lease.AcquireRequest, env Env) (lease.AcquireResult, TreeVerdict, error) {
	projection, err := m.Inspect(ctx)
	if err != nil {
		return lease.AcquireResult{}, TreeVerdict{}, err
	}
	owner, verdict, err := HeldByTree(projection, m.Namespace(), env)
	if err != nil {
		return lease.AcquireResult{}, TreeVerdict{}, err
	}
	if verdict.Runs {
		return lease.AcquireResult{Kind: lease.Held, Owner: owner}, verdict, nil
	}
	result, err := m.Acquire(ctx, req)
	if err != nil || result.Kind != lease.Acquired {
		return result, TreeVerdict{}, err
	}
	verdict, err = AcquiredTreeRuns(result, m.Namespace(), env)
	return result, verdict, err
}

// AcquiredTreeRuns judges the command trees that still hold a lease the
// caller has just acquired (result): those of the owners its acquire
// reclaimed, then those of the owners in namespace's quarantine/. The
// engine's acquire may wait for the lifecycle guard long after HeldByTree
// looked: meanwhile another run can reclaim an owner whose tree runs (its
// record goes to quarantine/) and die, and this acquire then reclaims that
// run, whose own group is empty; the tree in quarantine/ still holds the
// lease. The caller holds the lease without starting its command while
// the verdict Runs, and asks again until it does not.
func AcquiredTreeRuns(result lease.AcquireResult, namespace string, env Env) (TreeVerdict, error) {
	verdict, err := ReclaimedTreeRuns(result, env.Self, env.Inspector, env.Groups)
	if err != nil || verdict.Runs {
		return verdict, err
	}
	_, verdict, err = QuarantinedTreeRuns(env.FS, namespace, env.Self, env.Inspector, env.Groups)
	return verdict, err
}
