package realstress

import (
	"fmt"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// The fast pass. Most stress histories have a linearization that
// porcupine's depth-first search finds at once, and its power-set states
// (one set per configuration) stay small when few outcomes are unknown. So
// CheckSegmented first searches each segment of at least witnessSegmentOps
// operations only up to its first linearization, the next segment starting
// from that one's end states: if every segment passes, the linearizations
// put end to end are one of the whole history, and the history is
// linearizable. A segment that fails proves nothing (another linearization
// of an earlier segment might have ended in a state that explains it), and
// many killed operations can make the pass slow: then the exact search
// (segment.go) decides.

// witnessSegmentOps is the smallest segment the fast pass cuts.
const witnessSegmentOps = 500

// witnessShare: the fast pass gets 1/witnessShare of the check's time. It
// decides a history in well under a second when it can; a history it
// cannot decide (a violation, or many unknown outcomes) can keep
// porcupine searching a segment for long, and the exact search needs the
// rest.
const witnessShare = 4

// witnessPass reports whether the fast pass found a linearization of ops
// before deadline, and how many segments it cut.
func witnessPass(model porcupine.NondeterministicModel, ops []porcupine.Operation, deadline time.Time) (bool, int) {
	states := model.Init()
	segments := Segments(ops, witnessSegmentOps)
	for _, segment := range segments {
		left := time.Until(deadline)
		if left <= 0 {
			return false, len(segments)
		}
		ends := &witnessEnds{}
		marked := append(append([]porcupine.Operation(nil), segment...), endMarker(segment))
		if porcupine.CheckOperationsTimeout(ends.model(model, states), marked, left) != porcupine.Ok || len(ends.states) == 0 {
			return false, len(segments)
		}
		states = ends.states
	}
	return true, len(segments)
}

// segmentEnd is the end marker of a segment: the wrapped model records the
// states it is offered and accepts it, so the search stops at the first
// linearization.
type segmentEnd struct{}

// witnessEnds collects the states the first linearization of a segment
// ends in.
type witnessEnds struct {
	mutex  sync.Mutex
	states []any
}

// model is porcupine's power-set construction of inner, started from
// starts, with the end marker recorded: the set of states porcupine offers
// the marker reaches its Step state by state.
func (e *witnessEnds) model(inner porcupine.NondeterministicModel, starts []any) porcupine.Model {
	wrapped := inner
	wrapped.Partition, wrapped.PartitionEvent = nil, nil // one segment of one namespace
	wrapped.StepContext = nil                            // Step below is the one porcupine calls
	wrapped.Init = func() []any { return append([]any(nil), starts...) }
	wrapped.Step = func(state, input, output any) []any {
		if _, end := input.(segmentEnd); end {
			e.mutex.Lock()
			if !containsState(inner, e.states, state) {
				e.states = append(e.states, state)
			}
			e.mutex.Unlock()
			return []any{state}
		}
		return inner.Step(state, input, output)
	}
	wrapped.DescribeOperation = func(input, output any) string {
		if _, end := input.(segmentEnd); end {
			return "end of segment"
		}
		if inner.DescribeOperation == nil {
			return fmt.Sprintf("%v -> %v", input, output)
		}
		return inner.DescribeOperation(input, output)
	}
	return wrapped.ToModel()
}

// endMarker is the segment's end marker: called after every return of the
// segment, so every linearization takes it last.
func endMarker(segment []porcupine.Operation) porcupine.Operation {
	last, lane := int64(0), 0
	for _, op := range segment {
		last = max(last, op.Return, op.Call)
		lane = max(lane, op.ClientId)
	}
	return porcupine.Operation{ClientId: lane + 1, Input: segmentEnd{}, Call: last + 1, Return: last + 2}
}
