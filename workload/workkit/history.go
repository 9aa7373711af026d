package workkit

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Operations converts a workload history into porcupine operations
// as LeaseOperations does (stamps are the run's call/return ranks; an
// unknown outcome is models.Unknown{} with its bounded return; environment
// events have nil output), dropping the operations skip names.
func Operations(history []sim.Operation, skip func(sim.Operation) bool) []porcupine.Operation {
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

// CheckTimeout bounds one porcupine check of an admission or
// dirlease history.
const CheckTimeout = 10 * time.Second

// ErrCheckTimeout marks a porcupine check that timed out: its verdict is
// unknown, which is reported as a failure of its own, never as a pass.
var ErrCheckTimeout = fmt.Errorf("porcupine timed out: verdict unknown")

// CheckHistory runs one model's validation and check over ops.
func CheckHistory(engine string, ops []porcupine.Operation, validate func([]porcupine.Operation) error,
	check func([]porcupine.Operation, time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo),
	model porcupine.Model) error {
	if err := validate(ops); err != nil {
		return fmt.Errorf("%s history breaks the models' contract: %w", engine, err)
	}
	result, info := check(ops, CheckTimeout)
	switch result {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return fmt.Errorf("%w after %v on %d %s operations", ErrCheckTimeout, CheckTimeout, len(ops), engine)
	}
	return fmt.Errorf("%s history is not linearizable (%d operations): %s\n%s", engine, len(ops), DescribeIllegal(info),
		models.ExplainIllegal(model, ops, info))
}

// DescribeIllegal names the longest partial linearization's length per
// partition, for the failure message.
func DescribeIllegal(info porcupine.LinearizationInfo) string {
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

// CheckMessage reduces a CheckHistory error to a Verdict message whose
// class is stable while shrinking (operation counts vary): a timeout is
// "porcupine timeout" (never a pass), a broken contract "history
// contract", anything else "not linearizable: <engine> history". It is ""
// for nil.
func CheckMessage(engine string, err error) string {
	if err == nil {
		return ""
	}
	message := err.Error()
	switch {
	case errors.Is(err, ErrCheckTimeout):
		return campaign.CheckTimeoutMessage + ": " + message
	case strings.Contains(message, "contract"):
		return "history contract: " + message
	}
	return "not linearizable: " + engine + " history"
}

// NoneIsMinusOne maps a campaign knob's 0 to a workload option's "none"
// (-1): an option's own zero means "default".
func NoneIsMinusOne(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
