package models

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// ExplainIllegal renders, as plain text, why a history failed: for every
// partition that could not be fully linearized, the longest partial
// linearization porcupine found (each operation with the model state after
// it) and the operations that could have come next but could not follow
// it. model must be the one the history was checked with, and info the
// LinearizationInfo of an Illegal result (CheckLease and friends return
// it). The text is deterministic for a given history, so a failure message
// built from it is stable across reruns.
func ExplainIllegal(model porcupine.Model, ops []porcupine.Operation, info porcupine.LinearizationInfo) string {
	partitions := [][]porcupine.Operation{ops}
	if model.Partition != nil {
		partitions = model.Partition(ops)
	}
	partials := info.PartialLinearizationsOperations()
	if len(partials) != len(partitions) {
		return fmt.Sprintf("no linearization data for %d partitions (got %d): was info from an Illegal result of this model?", len(partitions), len(partials))
	}
	var text strings.Builder
	for p, partition := range partitions {
		longest := longestPartial(partials[p])
		if len(longest) == len(partition) {
			continue
		}
		fmt.Fprintf(&text, "partition %d (%d operations): longest partial linearization has %d:\n", p, len(partition), len(longest))
		explainPartition(&text, model, partition, longest)
	}
	if text.Len() == 0 {
		return "every partition linearizes: the history is not Illegal"
	}
	return text.String()
}

func longestPartial(candidates [][]porcupine.Operation) []porcupine.Operation {
	var longest []porcupine.Operation
	for _, candidate := range candidates {
		if len(candidate) > len(longest) {
			longest = candidate
		}
	}
	return longest
}

// opKey identifies an operation: stamps are unique in a valid history.
type opKey struct {
	lane      int
	call, ret int64
}

func keyOf(op porcupine.Operation) opKey { return opKey{op.ClientId, op.Call, op.Return} }

func explainPartition(text *strings.Builder, model porcupine.Model, partition, longest []porcupine.Operation) {
	state := model.Init()
	linearized := map[opKey]bool{}
	for _, op := range longest {
		linearized[keyOf(op)] = true
		ok, next := model.Step(state, op.Input, op.Output)
		if !ok {
			fmt.Fprintf(text, "  (replay diverged at %s)\n", OperationText(model, op))
			break
		}
		state = next
		fmt.Fprintf(text, "  %s\n      state: %s\n", OperationText(model, op), html.UnescapeString(model.DescribeState(state)))
	}
	var remaining []porcupine.Operation
	for _, op := range partition {
		if !linearized[keyOf(op)] {
			remaining = append(remaining, op)
		}
	}
	sort.Slice(remaining, func(i, j int) bool { return remaining[i].Call < remaining[j].Call })
	firstReturn := remaining[0].Return
	for _, op := range remaining {
		firstReturn = min(firstReturn, op.Return)
	}
	text.WriteString("  none of these could follow it:\n")
	for _, op := range remaining {
		if op.Call <= firstReturn {
			fmt.Fprintf(text, "  %s\n", OperationText(model, op))
		}
	}
}

// OperationText is op as one line of plain text, "[call,return] lane N:
// description": the models describe operations for porcupine's HTML page,
// so a text report (a failure message, a log) unescapes them here.
func OperationText(model porcupine.Model, op porcupine.Operation) string {
	return fmt.Sprintf("[%d,%d] lane %d: %s", op.Call, op.Return, op.ClientId,
		html.UnescapeString(model.DescribeOperation(op.Input, op.Output)))
}
