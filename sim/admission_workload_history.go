package sim

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
)

// historyOperations converts a workload history into porcupine operations
// as LeaseOperations does (stamps are the run's call/return ranks; an
// unknown outcome is models.Unknown{} with its bounded return; environment
// events have nil output), dropping the operations skip names.
func historyOperations(history []Operation, skip func(Operation) bool) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		if skip != nil && skip(op) {
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

// AdmissionOperations converts an admission workload history.
func AdmissionOperations(history []Operation) []porcupine.Operation {
	return historyOperations(history, nil)
}

// historyCheckTimeout bounds one porcupine check of an admission or
// dirlease history.
const historyCheckTimeout = 10 * time.Second

// ErrCheckTimeout marks a porcupine check that timed out: its verdict is
// unknown, which is reported as a failure of its own, never as a pass.
var ErrCheckTimeout = fmt.Errorf("porcupine timed out: verdict unknown")

// checkHistory runs one model's validation and check over ops.
func checkHistory(engine string, ops []porcupine.Operation, validate func([]porcupine.Operation) error,
	check func([]porcupine.Operation, time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo),
	model porcupine.Model) error {
	if err := validate(ops); err != nil {
		return fmt.Errorf("%s history breaks the models' contract: %w", engine, err)
	}
	result, info := check(ops, historyCheckTimeout)
	switch result {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return fmt.Errorf("%w after %v on %d %s operations", ErrCheckTimeout, historyCheckTimeout, len(ops), engine)
	}
	return fmt.Errorf("%s history is not linearizable (%d operations): %s\n%s", engine, len(ops), describeIllegal(info),
		models.ExplainIllegal(model, ops, info))
}

// CheckAdmissionHistory checks an admission workload history against
// models.AdmissionModel: nil means linearizable; a timeout wraps
// ErrCheckTimeout.
func CheckAdmissionHistory(history []Operation) error {
	return checkHistory("admission", AdmissionOperations(history), models.ValidateAdmissionHistory, models.CheckAdmission,
		models.AdmissionModel())
}
