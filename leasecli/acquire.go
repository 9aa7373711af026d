package leasecli

import (
	"context"

	"github.com/leasekit/leasekit/lease"
)

// Env is what run's acquire reads besides the lease: the caller's own
// identity, its view of the process table, and its process groups.
type Env struct {
	Self      lease.ProcessIdentity
	Inspector lease.Inspector
	Groups    Groups
}

// AcquireOnce is one acquire attempt of `leasereal run`: a lease whose
// dead owner's command tree still runs is Held (Owner is that record,
// Tree says why), and is not reclaimed. The engine judges the rest.
//
// A wrapper that dies between the tree check and the engine's judgement
// is reclaimed by the engine; the result's Tree then names the reclaimed
// owner's group if it still runs, and the caller holds the lease without
// starting its command until that group is gone (WaitTree).
func AcquireOnce(ctx context.Context, m *lease.Manager, req lease.AcquireRequest, env Env) (lease.AcquireResult, TreeVerdict, error) {
	projection, err := m.Inspect(ctx)
	if err != nil {
		return lease.AcquireResult{}, TreeVerdict{}, err
	}
	if projection.Kind == lease.Owned {
		verdict, err := HolderTreeRuns(projection.Owner, env.Self, env.Inspector, env.Groups)
		if err != nil {
			return lease.AcquireResult{}, TreeVerdict{}, err
		}
		if verdict.Runs {
			return lease.AcquireResult{Kind: lease.Held, Owner: projection.Owner}, verdict, nil
		}
	}
	result, err := m.Acquire(ctx, req)
	if err != nil || result.Kind != lease.Acquired {
		return result, TreeVerdict{}, err
	}
	verdict, err := ReclaimedTreeRuns(result, env.Self, env.Inspector, env.Groups)
	return result, verdict, err
}
