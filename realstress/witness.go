package realstress

import (
	"fmt"
	"strings"
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
// (model is the power-set model) before deadline.
func witnessPass(model porcupine.Model, ops []porcupine.Operation, deadline time.Time) bool {
	states := segmentState{model.Init()}
	for _, segment := range Segments(ops, witnessSegmentOps) {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		wrapped := &segmentModel{inner: model, start: states}
		marked := append(append([]porcupine.Operation(nil), segment...), endMarker(segment))
		if porcupine.CheckOperationsTimeout(wrapped.model(), marked, left) != porcupine.Ok || len(wrapped.ends) == 0 {
			return false
		}
		states = wrapped.ends
	}
	return true
}

// segmentEnd is the end marker of a segment: the wrapped model records the
// states it is offered and refuses it.
type segmentEnd struct{}

// segmentState is the wrapped model's state: the set of inner states the
// history may be in (each a state of the inner model, itself possibly a set).
type segmentState []any

// segmentModel wraps a porcupine model so that it starts from a set of
// states and records the end states of the first linearization found.
type segmentModel struct {
	inner porcupine.Model
	start segmentState
	// ends collects, under mutex, the inner states offered to segmentEnd.
	mutex sync.Mutex
	ends  segmentState
}

func (m *segmentModel) equal(a, b any) bool {
	if m.inner.Equal != nil {
		return m.inner.Equal(a, b)
	}
	return a == b
}

func (m *segmentModel) contains(set segmentState, state any) bool {
	for _, s := range set {
		if m.equal(s, state) {
			return true
		}
	}
	return false
}

func (m *segmentModel) step(state, input, output any) (bool, any) {
	states := state.(segmentState)
	if _, end := input.(segmentEnd); end {
		m.mutex.Lock()
		for _, s := range states {
			if !m.contains(m.ends, s) {
				m.ends = append(m.ends, s)
			}
		}
		m.mutex.Unlock()
		return true, state // accepted: the search stops at this first linearization
	}
	var next segmentState
	for _, s := range states {
		if ok, successor := m.inner.Step(s, input, output); ok && !m.contains(next, successor) {
			next = append(next, successor)
		}
	}
	return len(next) > 0, next
}

// model is the porcupine model of one segment. It has no Partition: the
// histories the stress writes have one namespace.
func (m *segmentModel) model() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return m.start },
		Step: m.step,
		Equal: func(a, b any) bool {
			first, second := a.(segmentState), b.(segmentState)
			if len(first) != len(second) {
				return false
			}
			for _, s := range first {
				if !m.contains(second, s) {
					return false
				}
			}
			return true
		},
		Hash: func(state any) uint64 {
			if m.inner.Hash == nil {
				return 0
			}
			var sum uint64 // XOR: the order of a set does not matter
			for _, s := range state.(segmentState) {
				sum ^= m.inner.Hash(s)
			}
			return sum
		},
		DescribeOperation: func(input, output any) string {
			if _, end := input.(segmentEnd); end {
				return "end of segment"
			}
			if m.inner.DescribeOperation == nil {
				return fmt.Sprintf("%v -> %v", input, output)
			}
			return m.inner.DescribeOperation(input, output)
		},
		DescribeState: func(state any) string {
			var parts []string
			for _, s := range state.(segmentState) {
				if m.inner.DescribeState == nil {
					parts = append(parts, fmt.Sprintf("%v", s))
				} else {
					parts = append(parts, m.inner.DescribeState(s))
				}
			}
			return "one of {" + strings.Join(parts, " | ") + "}"
		},
	}
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
