package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
)

// LeaseOperations converts a lease workload history (Result.History) into
// porcupine operations over the models package's lease types.
//
// Timestamps: the models need one global counter with no shared stamps,
// while the simulator stamps operations with simulated time, which several
// events of one step share. Within one step only one process acts, and the
// history is appended in the order things happen (a crash's unknown returns,
// then the death; a process's return, then its next call), so ordering by
// (time, history index, call before return) is the true order; the stamps
// are that order's ranks. An operation whose outcome is unknown gets
// models.Unknown{} and keeps its return bound (the crash instant, just
// before the death event). Read-only inspects with an unknown outcome are
// dropped (CHECKING.md).
func LeaseOperations(history []Operation) []porcupine.Operation {
	type event struct {
		time  int64
		index int
		phase int // 0 call, 1 return
	}
	events := make([]event, 0, 2*len(history))
	for i, op := range history {
		if leaseSkipped(op) {
			continue
		}
		events = append(events, event{op.Call, i, 0})
		if op.Lane != 0 {
			events = append(events, event{op.Return, i, 1})
		}
	}
	slices.SortFunc(events, func(a, b event) int {
		switch {
		case a.time != b.time:
			return compareInt64(a.time, b.time)
		case a.index != b.index:
			return a.index - b.index
		}
		return a.phase - b.phase
	})
	calls := make(map[int]int64, len(history))
	returns := make(map[int]int64, len(history))
	for rank, ev := range events {
		if ev.phase == 0 {
			calls[ev.index] = int64(rank + 1)
		} else {
			returns[ev.index] = int64(rank + 1)
		}
	}
	ops := make([]porcupine.Operation, 0, len(history))
	for i, op := range history {
		if leaseSkipped(op) {
			continue
		}
		out := op.Output
		if op.Unknown || out == nil {
			out = models.Unknown{}
		}
		ret := returns[i]
		if op.Lane == 0 {
			out, ret = nil, calls[i]
		}
		ops = append(ops, porcupine.Operation{ClientId: op.Lane, Input: op.Input, Call: calls[i], Output: out, Return: ret})
	}
	return ops
}

func leaseSkipped(op Operation) bool {
	_, inspect := op.Input.(models.LeaseInspect)
	return inspect && (op.Unknown || op.Output == nil)
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
