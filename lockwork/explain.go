package lockwork

import (
	"fmt"
	"html"
	"reflect"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// explainIllegal turns porcupine's partial linearizations of a history
// models.LockModel rejects into one sentence: the operation that could not
// be placed after the longest order that fits (the first to return among
// those left out), who was told what and when, and the model's state at
// that point, e.g. "client-1 was told p2 Acquire -> acquired at 40.012ms,
// but in the longest order that fits (7 of 9 operations) the lock was held
// by p1, epoch 0 (p1 = client-0)".
func explainIllegal(history []sim.Operation, ops []porcupine.Operation, rules models.LockRules,
	info porcupine.LinearizationInfo) string {
	model := models.LockModel(rules)
	longest := longestPartial(info)
	if longest == nil {
		return "porcupine found no order that fits even the first operation"
	}
	placed := make(map[int64]bool, len(longest))
	state := model.Init()
	for _, op := range longest {
		placed[op.Call] = true
		if ok, next := model.Step(state, op.Input, op.Output); ok {
			state = next
		}
	}
	stuck, found := porcupine.Operation{}, false
	for _, op := range ops {
		if !placed[op.Call] && (!found || op.Return < stuck.Return) {
			stuck, found = op, true
		}
	}
	if !found {
		return "every operation fits the longest order porcupine found"
	}
	who, at := tellerOf(history, stuck.Call)
	return fmt.Sprintf("%s was told %s at %v, but in the longest order that fits (%d of %d operations) the lock was %s%s",
		who, html.UnescapeString(model.DescribeOperation(stuck.Input, stuck.Output)), at, len(longest), len(ops),
		stateText(model, state), laneNames(history))
}

// longestPartial is the longest of porcupine's partial linearizations.
func longestPartial(info porcupine.LinearizationInfo) []porcupine.Operation {
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, order := range partition {
			if len(order) > len(longest) {
				longest = order
			}
		}
	}
	return longest
}

// tellerOf names the process of the history operation with call rank call,
// and when its answer came.
func tellerOf(history []sim.Operation, call int64) (string, time.Duration) {
	for _, op := range history {
		if int64(op.CallOrder) == call {
			return op.Proc, time.Duration(op.Return)
		}
	}
	return "?", 0
}

// laneNames renders the model's p<lane> names as the processes that used
// each lane.
func laneNames(history []sim.Operation) string {
	seen := map[int]bool{}
	out := ""
	for _, op := range history {
		if op.Op != opAcquire || seen[op.Lane] {
			continue
		}
		seen[op.Lane] = true
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("p%d = %s", op.Lane, op.Proc)
	}
	if out == "" {
		return ""
	}
	return " (" + out + ")"
}

// stateText is the model's state as plain text: the state-set model
// prints its possible states inside braces; one state prints bare.
func stateText(model porcupine.Model, state any) string {
	text := html.UnescapeString(model.DescribeState(state))
	if v := reflect.ValueOf(state); v.Kind() == reflect.Slice && v.Len() == 1 {
		return strings.TrimSuffix(strings.TrimPrefix(text, "{"), "}")
	}
	return "one of " + text
}
