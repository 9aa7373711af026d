package realstress

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Checking a long history in segments.
//
// porcupine keeps, in every cache entry, a bitset over all the operations of
// the history, so its cost grows faster than the history: a 10,000-operation
// stress history checks in under a second, but ten times that takes tens of
// seconds and a slower machine hits the time bound, which is no verdict.
//
// A quiescent point is a stamp q with every operation returned before q or
// called after q. Every linearization of the history then orders all
// operations before q first (real-time order), so the history is
// linearizable iff the part after q is linearizable from SOME state that
// some linearization of the part before q ends in. CheckSegmented cuts the
// history at quiescent points into segments of at least a minimum size and,
// segment by segment, computes the exact set of states its linearizations
// can end in, starting from the exact set the previous segment left: a
// porcupine search over the segment plus an end marker that must come last
// and that the wrapped model records and then refuses, so the search visits
// every linearization (up to porcupine's cache of identical configurations,
// which prunes only repeats). No state is guessed and none is dropped, so
// the verdict is the same as one check of the whole history: an illegal
// segment is an illegal history, and a segment whose search times out makes
// the verdict Unknown, never a pass or a violation.
//
// The quiescent points are found in the stamps themselves (a strict gap:
// porcupine treats [Call, Return] as closed), so a history without any is
// simply one segment. The stress parent makes such points on purpose by
// pausing every worker between operations now and then (quiesce.go).

// SegmentedResult is the outcome of CheckSegmented.
type SegmentedResult struct {
	Result porcupine.CheckResult
	// Segments is how many segments were checked (all of them unless the
	// result is Illegal or Unknown: then the last one is the one that
	// failed or timed out).
	Segments int
	// Failed is the illegal segment's operations, Model the model to
	// replay them with (it starts from the states the segments before it
	// left), and Info its verbose linearization info, for the report.
	Failed []porcupine.Operation
	Model  porcupine.Model
	Info   porcupine.LinearizationInfo
	// Exact is set when the fast pass (one linearization per segment)
	// failed somewhere and the verdict comes from the exhaustive pass.
	Exact bool
}

// segmentEnd is the end marker of a segment: the wrapped model records the
// states it is offered and refuses it.
type segmentEnd struct{}

// segmentState is the wrapped model's state: the set of inner states the
// history may be in (each a state of the inner model, itself possibly a set).
type segmentState []any

// segmentModel wraps a porcupine model so that it starts from a set of
// states and collects the states the segment's linearizations end in.
type segmentModel struct {
	inner porcupine.Model
	start segmentState
	// witness: accept the end marker, so the search stops at the first
	// linearization and ends holds its end states only; otherwise refuse
	// it, so the search visits every linearization and ends holds them all.
	witness bool
	// ends collects, under mutex, every inner state offered to segmentEnd.
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
		return m.witness, state // refused: the search goes on to every other end state
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

// Segments cuts ops at quiescent points into segments of at least minOps
// operations (the last one may be shorter). Within a segment the operations
// keep their order in ops.
func Segments(ops []porcupine.Operation, minOps int) [][]porcupine.Operation {
	if minOps < 1 {
		panic(fmt.Sprintf("realstress: segment size %d", minOps))
	}
	byCall := append([]porcupine.Operation(nil), ops...)
	sort.SliceStable(byCall, func(a, b int) bool { return byCall[a].Call < byCall[b].Call })
	var segments [][]porcupine.Operation
	start := 0
	lastReturn := int64(-1 << 63)
	for i, op := range byCall {
		// A strict gap: porcupine's intervals are closed.
		if i-start >= minOps && lastReturn < op.Call {
			segments = append(segments, byCall[start:i:i])
			start = i
		}
		lastReturn = max(lastReturn, op.Return) // over every earlier operation, in all segments
	}
	if start < len(byCall) {
		segments = append(segments, byCall[start:])
	}
	return segments
}

// CheckSegmented checks ops against model segment by segment (see above),
// within timeout in all. An empty history is Ok.
//
// It first goes the fast way: each segment is searched only up to its first
// linearization, and the next segment starts from that one's end states. If
// every segment passes, the linearizations put end to end are one of the
// whole history: Ok. If one fails, that proves nothing yet (another
// linearization of an earlier segment might have ended in a state that
// explains it), so the check starts over the exact way, every segment
// searched exhaustively, and only that verdict is Illegal.
func CheckSegmented(model porcupine.Model, ops []porcupine.Operation, minOps int, timeout time.Duration) SegmentedResult {
	deadline := time.Now().Add(timeout)
	segments := Segments(ops, minOps)
	result := checkSegments(model, segments, true, deadline)
	if result.Result != porcupine.Illegal {
		return result
	}
	exact := checkSegments(model, segments, false, deadline)
	exact.Exact = true
	return exact
}

// checkSegments checks the segments in order, each from the end states of
// the one before, carrying a witness's end states or all of them.
func checkSegments(model porcupine.Model, segments [][]porcupine.Operation, witness bool, deadline time.Time) SegmentedResult {
	states := segmentState{model.Init()}
	var result SegmentedResult
	for _, segment := range segments {
		result.Segments++
		left := time.Until(deadline)
		if left <= 0 {
			result.Result = porcupine.Unknown
			return result
		}
		wrapped := &segmentModel{inner: model, start: states, witness: witness}
		marked := append(append([]porcupine.Operation(nil), segment...), endMarker(segment))
		verdict := porcupine.CheckOperationsTimeout(wrapped.model(), marked, left)
		switch {
		case verdict == porcupine.Unknown:
			result.Result = porcupine.Unknown
			return result
		case verdict == porcupine.Ok && !witness:
			panic("realstress: an exhaustive segment check accepted the end marker, which it always refuses")
		case len(wrapped.ends) == 0 && !witness:
			return illegalSegment(result, model, states, segment, time.Until(deadline))
		case len(wrapped.ends) == 0:
			result.Result = porcupine.Illegal // from this witness only: CheckSegmented starts over exactly
			return result
		}
		states = wrapped.ends
	}
	result.Result = porcupine.Ok
	return result
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

// illegalSegment fills the result of a segment no linearization explains,
// with the verbose info for the report (a rerun without the end marker).
func illegalSegment(result SegmentedResult, model porcupine.Model, states segmentState, segment []porcupine.Operation, left time.Duration) SegmentedResult {
	wrapped := &segmentModel{inner: model, start: states}
	result.Result, result.Failed, result.Model = porcupine.Illegal, segment, wrapped.model()
	verbose, info := porcupine.CheckOperationsVerbose(result.Model, segment, max(left, 10*time.Second))
	if verbose == porcupine.Ok {
		panic("realstress: the verbose rerun accepted a segment the end-state search found no linearization of")
	}
	result.Info = info
	return result
}
