package leasework

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// LeaseOperations converts a lease workload history (Result.History) into
// porcupine operations over the models package's lease types.
//
// Timestamps: the models need one global counter with no shared stamps,
// while several events of one step share a simulated time. The runtime
// ranks every call, return and event in the order it happened
// (Operation.CallOrder, ReturnOrder); those ranks are the stamps. An
// operation whose outcome is unknown gets models.Unknown{} and keeps its
// return bound (the crash, ranked just before the death event). Read-only
// inspects with an unknown outcome are dropped (package models, "The
// history contract"), and so are reclaim moves and operators' clears that
// a power loss undid before they were durable.
func LeaseOperations(history []sim.Operation) []porcupine.Operation {
	return workkit.Operations(history, leaseSkipped)
}

func leaseSkipped(op sim.Operation) bool {
	if op.Op == leaseReclaimUndone || op.Op == leaseClearUndone {
		return true // a power loss undid the move before it was durable
	}
	_, inspect := op.Input.(models.LeaseInspect)
	return inspect && (op.Unknown || op.Output == nil)
}

// leaseCheckTimeout bounds one porcupine check of a lease history.
const leaseCheckTimeout = 10 * time.Second

// CheckLeaseHistory checks a lease workload history against the lease
// model. nil means linearizable; a timeout is an error of its own.
func CheckLeaseHistory(history []sim.Operation) error {
	ops := LeaseOperations(history)
	if err := models.ValidateLeaseHistory(ops); err != nil {
		return fmt.Errorf("lease history breaks the models' contract: %w", err)
	}
	result, info := models.CheckLease(ops, leaseCheckTimeout)
	switch result {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return fmt.Errorf("porcupine timed out after %v on %d lease operations: verdict unknown", leaseCheckTimeout, len(ops))
	}
	return fmt.Errorf("lease history is not linearizable (%d operations): %s", len(ops), workkit.DescribeIllegal(info))
}
