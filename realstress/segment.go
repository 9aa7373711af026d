package realstress

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Checking a long history in segments.
//
// A quiescent point is a stamp q with every operation returned before q or
// called after q. Every linearization of the history then orders all
// operations before q first (real-time order), so the history is
// linearizable iff the part after q is linearizable from SOME state that
// some linearization of the part before q ends in. CheckSegmented cuts the
// history at quiescent points into segments and, segment by segment,
// computes the exact set of model states its linearizations can end in,
// starting from the exact set the previous segment left.
//
// It searches the model's own states, not porcupine's power sets of them:
// a configuration is (the operations linearized so far, one model state),
// every configuration reachable from the start states is visited once, and
// the end states are the states of the configurations with every operation
// linearized. Killed workers leave many operations of unknown outcome, and
// porcupine's power-set states differ with the order those are linearized
// in; a search over single states merges every order that reaches the same
// state. No state is guessed and none is dropped, so the verdict is the
// same as one check of the whole history: a segment no linearization
// explains is an illegal history, and a segment whose search runs out of
// time (or of its configuration budget) makes the verdict Unknown, never a
// pass or a violation.
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
	// Configurations is how many configurations the exact search visited,
	// over all segments: the cost of the check.
	Configurations int
	// Witness is set when the fast pass decided (Ok): the exact search
	// did not run.
	Witness bool
	// Failed is the illegal segment's operations, Model the model to
	// replay them with (it starts from the states the segments before it
	// left), and Info its verbose linearization info, for the report.
	Failed []porcupine.Operation
	Model  porcupine.Model
	Info   porcupine.LinearizationInfo
}

// maxSegmentConfigurations bounds one segment's search: past it the
// verdict is Unknown rather than a machine out of memory.
const maxSegmentConfigurations = 4_000_000

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

// CheckSegmented checks ops against model segment by segment (cut at
// quiescent points by Segments, each from the exact end states of the one
// before), within timeout in all, each partition of the model on its own. An empty
// history is Ok. The fast pass (witness.go) goes first, with a quarter of
// the time: when it finds a linearization the verdict is Ok; otherwise the
// exact search decides with the rest.
func CheckSegmented(model porcupine.NondeterministicModel, ops []porcupine.Operation, minOps int, timeout time.Duration) SegmentedResult {
	started := time.Now()
	deadline := started.Add(timeout)
	if ok, segments := witnessPass(model, ops, started.Add(timeout/witnessShare)); ok {
		return SegmentedResult{Result: porcupine.Ok, Segments: segments, Witness: true}
	}
	return checkExact(model, ops, minOps, deadline)
}

// checkExact is the exact search alone: every partition of ops, segment by
// segment, from the exact end states of the segment before.
func checkExact(model porcupine.NondeterministicModel, ops []porcupine.Operation, minOps int, deadline time.Time) SegmentedResult {
	partitions := [][]porcupine.Operation{ops}
	if model.Partition != nil && len(ops) > 0 {
		partitions = model.Partition(ops)
	}
	var result SegmentedResult
	for _, partition := range partitions {
		checkSegments(model, Segments(partition, minOps), deadline, &result)
		if result.Result != porcupine.Ok {
			return result
		}
	}
	result.Result = porcupine.Ok
	return result
}

// checkSegments checks one partition's segments in order, each from the
// end states of the one before, and leaves Ok, Illegal or Unknown in result.
func checkSegments(model porcupine.NondeterministicModel, segments [][]porcupine.Operation, deadline time.Time, result *SegmentedResult) {
	states := uniqueStates(model, model.Init())
	for _, segment := range segments {
		result.Segments++
		search := newSegmentSearch(model, segment, deadline)
		ends, finished := search.run(states)
		result.Configurations += len(search.seen)
		switch {
		case !finished:
			result.Result = porcupine.Unknown
			return
		case len(ends) == 0:
			illegalSegment(result, model, states, segment, time.Until(deadline))
			return
		}
		states = ends
	}
	result.Result = porcupine.Ok
}

// uniqueStates drops repeated states (by the model's Equal).
func uniqueStates(model porcupine.NondeterministicModel, states []any) []any {
	var unique []any
	for _, s := range states {
		if !containsState(model, unique, s) {
			unique = append(unique, s)
		}
	}
	return unique
}

func containsState(model porcupine.NondeterministicModel, states []any, state any) bool {
	for _, s := range states {
		if equalStates(model, s, state) {
			return true
		}
	}
	return false
}

func equalStates(model porcupine.NondeterministicModel, a, b any) bool {
	if model.Equal != nil {
		return model.Equal(a, b)
	}
	return a == b
}

// segmentConfiguration is a point of the search: the segment's operations
// linearized so far (a bitset over the segment, by call order) and one
// model state they can leave.
type segmentConfiguration struct {
	done  []uint64
	state any
}

// configurationKey indexes seen: the bitset's bytes and the state's hash
// (states with one key are told apart by Equal).
type configurationKey struct {
	done string
	hash uint64
}

// segmentSearch visits every configuration of one segment reachable from
// its start states, depth first.
type segmentSearch struct {
	model    porcupine.NondeterministicModel
	ops      []porcupine.Operation // by call stamp
	deadline time.Time
	seen     map[configurationKey][]any
	stack    []segmentConfiguration
	ends     []any
}

func newSegmentSearch(model porcupine.NondeterministicModel, segment []porcupine.Operation, deadline time.Time) *segmentSearch {
	ops := append([]porcupine.Operation(nil), segment...)
	sort.SliceStable(ops, func(a, b int) bool { return ops[a].Call < ops[b].Call })
	return &segmentSearch{model: model, ops: ops, deadline: deadline, seen: map[configurationKey][]any{}}
}

// run returns the segment's end states from starts; finished is false when
// the deadline or the configuration budget stopped it first.
func (s *segmentSearch) run(starts []any) (ends []any, finished bool) {
	empty := make([]uint64, (len(s.ops)+63)/64)
	for _, state := range starts {
		s.visit(empty, state)
	}
	for expanded := 0; len(s.stack) > 0; expanded++ {
		if expanded%1024 == 0 && (time.Now().After(s.deadline) || len(s.seen) > maxSegmentConfigurations) {
			return nil, false
		}
		next := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		s.expand(next)
	}
	return s.ends, true
}

// expand takes every operation that may come next: one not linearized yet
// whose call is not after the earliest return among those not linearized
// (an operation that returned must come before every later call).
func (s *segmentSearch) expand(c segmentConfiguration) {
	earliestReturn := int64(1<<63 - 1)
	for i, op := range s.ops {
		if !bitSet(c.done, i) {
			earliestReturn = min(earliestReturn, op.Return)
		}
	}
	for i, op := range s.ops {
		if op.Call > earliestReturn {
			break // by call order: every later one is too
		}
		if bitSet(c.done, i) {
			continue
		}
		done := withBit(c.done, i)
		for _, state := range s.model.Step(c.state, op.Input, op.Output) {
			s.visit(done, state)
		}
	}
}

// visit records a configuration the first time it is reached: an end
// state when every operation is linearized, else a configuration to expand.
func (s *segmentSearch) visit(done []uint64, state any) {
	if allSet(done, len(s.ops)) {
		if !containsState(s.model, s.ends, state) {
			s.ends = append(s.ends, state)
		}
		return
	}
	key := configurationKey{done: bitsKey(done)}
	if s.model.Hash != nil {
		key.hash = s.model.Hash(state)
	}
	if containsState(s.model, s.seen[key], state) {
		return
	}
	s.seen[key] = append(s.seen[key], state)
	s.stack = append(s.stack, segmentConfiguration{done: done, state: state})
}

func bitSet(bits []uint64, i int) bool { return bits[i/64]&(1<<(i%64)) != 0 }

func withBit(bits []uint64, i int) []uint64 {
	next := append([]uint64(nil), bits...)
	next[i/64] |= 1 << (i % 64)
	return next
}

func allSet(bits []uint64, n int) bool {
	for i := range n / 64 {
		if bits[i] != ^uint64(0) {
			return false
		}
	}
	rest := n % 64
	return rest == 0 || bits[n/64] == 1<<rest-1
}

// bitsKey is the bitset as a map key.
func bitsKey(bits []uint64) string {
	key := make([]byte, 0, 8*len(bits))
	for _, word := range bits {
		for shift := 0; shift < 64; shift += 8 {
			key = append(key, byte(word>>shift))
		}
	}
	return string(key)
}

// illegalSegment fills the result of a segment no linearization explains,
// with porcupine's verbose info for the report: its search over the power
// sets, from the same start states, must agree that none exists.
func illegalSegment(result *SegmentedResult, model porcupine.NondeterministicModel, states []any, segment []porcupine.Operation, left time.Duration) {
	from := model
	from.Partition, from.PartitionEvent = nil, nil
	from.Init = func() []any { return append([]any(nil), states...) }
	result.Result, result.Failed, result.Model = porcupine.Illegal, segment, from.ToModel()
	verbose, info := porcupine.CheckOperationsVerbose(result.Model, segment, max(left, 10*time.Second))
	if verbose == porcupine.Ok {
		panic("realstress: porcupine linearized a segment the exact search found no linearization of")
	}
	result.Info = info
}
