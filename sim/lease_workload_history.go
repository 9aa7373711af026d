package sim

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
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
// inspects with an unknown outcome are dropped (CHECKING.md), and so are
// reclaim moves that a power loss undid before they were durable.
func LeaseOperations(history []Operation) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		if leaseSkipped(op) {
			continue
		}
		if op.CallOrder <= 0 || op.ReturnOrder < op.CallOrder {
			panic(fmt.Sprintf("sim: history operation %s of %s has orders %d..%d", op.Op, op.Proc, op.CallOrder, op.ReturnOrder))
		}
		out := op.Output
		if op.Unknown || out == nil {
			out = models.Unknown{}
		}
		if op.Lane == 0 {
			out = nil
		}
		ops = append(ops, porcupine.Operation{ClientId: op.Lane, Input: op.Input, Call: int64(op.CallOrder),
			Output: out, Return: int64(op.ReturnOrder)})
	}
	return ops
}

func leaseSkipped(op Operation) bool {
	if op.Op == leaseReclaimUndone {
		return true // a power loss undid the move before it was durable
	}
	_, inspect := op.Input.(models.LeaseInspect)
	return inspect && (op.Unknown || op.Output == nil)
}

// leaseCheckTimeout bounds one porcupine check of a lease history.
const leaseCheckTimeout = 10 * time.Second

// CheckLeaseHistory checks a lease workload history against the lease
// model. nil means linearizable; a timeout is an error of its own.
func CheckLeaseHistory(history []Operation) error {
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
	return fmt.Errorf("lease history is not linearizable (%d operations): %s", len(ops), describeIllegal(info))
}

// describeIllegal names the longest partial linearization's length per
// partition, for the failure message.
func describeIllegal(info porcupine.LinearizationInfo) string {
	partials := info.PartialLinearizations()
	text := ""
	for i, partition := range partials {
		longest := 0
		for _, lin := range partition {
			longest = max(longest, len(lin))
		}
		text += fmt.Sprintf("[partition %d: longest prefix %d]", i, longest)
	}
	return text
}
