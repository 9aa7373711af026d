// Package models holds the porcupine models of leasekit's engines: pure
// sequential specifications, one per engine (lease, admission, dirlease),
// and LockModel, the mutual-exclusion lock that lockwork checks a user's
// lock against.
//
// The package imports porcupine and the standard library only, never an
// engine package: a specification that shared code with what it checks
// would share its bugs too (docs/ARCHITECTURE.md, "Import rules").
//
// # The history contract
//
// The simulator records every engine call as one porcupine.Operation whose
// Input and Output are the exported types of this package (LeaseAcquire and
// LeaseAcquireResult, ...). The rules below are what makes the verdict
// sound; Validate* reports a history that breaks one of them.
//
//   - Timestamps come from one global counter that advances at every stamp:
//     no two calls, returns or events share a stamp, and Return > Call for
//     every engine operation.
//   - ClientId is a lane. One lane holds the operations of exactly one
//     process incarnation (Proc), one after the other. A restarted process is
//     a new Proc on a new lane. Environment events may share any lane; the
//     simulator should give them a lane of their own.
//   - Proc numbers identify process incarnations and are never reused, even
//     when the simulated PID is (PIDReuse only marks the history).
//   - An operation whose outcome the caller never learned (it crashed, or the
//     engine returned an error that does not prove the call had no effect)
//     stays in the history with Output Unknown{} and Return bounded by the
//     last stamp at which it could still take effect: for a crash, the stamp
//     just before the ProcessDeath or Reboot event that ended it.
//   - Environment events (ProcessDeath, Reboot, PIDReuse, LeaseCorruption,
//     DirSwap, ...) are instantaneous: Call == Return, Output nil.
//   - Read-only operations cut short by a crash (LeaseInspect, DirUse) should
//     be dropped and shown as annotations; the models accept them as no-ops.
//   - An engine error that does not prove the call had no effect (EIO,
//     ENOSPC, a failed fsync, an invalid helper PID found mid-call) is
//     recorded as Unknown{} too, with the real return stamp.
//   - An acknowledged operation is durable: no event undoes it, not even a
//     Reboot (power loss). A lease, claim or slot that vanishes, or comes
//     back, after a power loss is reported as a violation: the engines
//     fsync before they answer.
//
// An Unknown output never means "accept anything": the lease, admission
// and lock models are porcupine NondeterministicModels that fork the state
// into "did not happen" and every way it could have happened, and a known
// output keeps only the states that could have produced it. The dirlease model keeps the
// same uncertainty inside one state (see dirlease.go). States are
// comparable values (no maps or slices) and Step never mutates its input.
//
// Check* run the fast check first and rerun the verbose one only when the
// result is Illegal; ExplainIllegal turns its LinearizationInfo into a
// plain-text story. porcupine.Unknown means the check timed out: a failure
// with its own message, never a pass.
package models

import (
	"cmp"
	"fmt"
	"html"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Unknown is the output of an operation whose outcome the caller never
// learned. The model forks: the operation either had no effect or had one of
// the effects it could have had, at some instant inside [Call, Return].
type Unknown struct{}

// ProcessDeath is the environment event "process incarnation Proc is dead":
// SIGKILL, exit, or a single-threaded zombie. Emit it only when the process
// is truly gone (a zombie leader with live threads is alive).
type ProcessDeath struct {
	Proc int
}

// Reboot is the environment event "host Host lost power or rebooted": every
// process on it dies and its boot identity changes.
type Reboot struct {
	Host string
}

// PIDReuse marks that a new process on Host took a PID an earlier
// incarnation had. It changes nothing in any model: the earlier incarnation
// stays dead. It exists so the history and its visualization show it.
type PIDReuse struct {
	Host string
	PID  int
}

// describeEnvironment renders an environment event shared by all models.
func describeEnvironment(input any) (string, bool) {
	switch in := input.(type) {
	case ProcessDeath:
		return fmt.Sprintf("ProcessDeath(p%d)", in.Proc), true
	case Reboot:
		return fmt.Sprintf("Reboot(%s)", in.Host), true
	case PIDReuse:
		return fmt.Sprintf("PIDReuse(%s pid %d)", in.Host, in.PID), true
	}
	return "", false
}

// procOp is what validation needs to know about one operation.
type procOp struct {
	// output is a value of the output type the input calls for (Unknown{}
	// is always allowed too); nil for an environment event.
	output     any
	proc       int    // 0 for an environment event
	host       string // "" when the input does not say
	deathProc  int    // ProcessDeath's victim
	rebootHost string // Reboot's host
	// window allows an environment event to span [Call, Return] (Call <=
	// Return) instead of an instant: porcupine places it anywhere inside
	// (LeaseReclaim recorded from outside the engine).
	window bool
}

// validateHistory checks the history contract shared by all models.
// classify returns ok=false for an input of the wrong type or one missing
// a required field.
func validateHistory(ops []porcupine.Operation, classify func(input any) (procOp, bool)) error {
	type laneEnd struct {
		proc   int
		index  int
		ret    int64
		called bool
	}
	byCall := make([]int, len(ops))
	for i := range ops {
		byCall[i] = i
	}
	slices.SortStableFunc(byCall, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })

	lanes := map[int]*laneEnd{}
	hostOf := map[int]string{}
	deathAt := map[int]int64{}
	rebootAt := map[string][]int64{}
	infos := make([]procOp, len(ops))
	for _, i := range byCall {
		op := ops[i]
		info, ok := classify(op.Input)
		if !ok {
			return fmt.Errorf("operation %d: input %+v does not belong to this model or lacks a required field", i, op.Input)
		}
		infos[i] = info
		if err := validateOutput(i, op, info); err != nil {
			return err
		}
		if info.proc == 0 {
			if info.window && op.Call > op.Return {
				return fmt.Errorf("operation %d (%T): Return %d is before Call %d", i, op.Input, op.Return, op.Call)
			}
			if !info.window && op.Call != op.Return {
				return fmt.Errorf("operation %d (%T): an environment event needs Call == Return, got [%d, %d]", i, op.Input, op.Call, op.Return)
			}
			if info.deathProc != 0 {
				if _, seen := deathAt[info.deathProc]; seen {
					return fmt.Errorf("operation %d: process p%d dies twice", i, info.deathProc)
				}
				deathAt[info.deathProc] = op.Call
			}
			if info.rebootHost != "" {
				rebootAt[info.rebootHost] = append(rebootAt[info.rebootHost], op.Call)
			}
			continue
		}
		if op.Return <= op.Call {
			return fmt.Errorf("operation %d (%T): Return %d is not after Call %d", i, op.Input, op.Return, op.Call)
		}
		if info.host != "" {
			if h, seen := hostOf[info.proc]; seen && h != info.host {
				return fmt.Errorf("operation %d: process p%d is on host %q and %q", i, info.proc, h, info.host)
			}
			hostOf[info.proc] = info.host
		}
		lane, seen := lanes[op.ClientId]
		if !seen {
			lanes[op.ClientId] = &laneEnd{proc: info.proc, index: i, ret: op.Return, called: true}
			continue
		}
		if lane.proc != info.proc {
			return fmt.Errorf("operation %d: lane %d holds processes p%d and p%d; give each incarnation its own lane", i, op.ClientId, lane.proc, info.proc)
		}
		if op.Call <= lane.ret {
			return fmt.Errorf("operation %d: lane %d is not sequential: it calls at %d before operation %d returns at %d", i, op.ClientId, op.Call, lane.index, lane.ret)
		}
		lane.index, lane.ret = i, op.Return
	}
	return validateDeaths(ops, infos, hostOf, deathAt, rebootAt)
}

// validateOutput checks that op's output has the type its input calls for.
func validateOutput(i int, op porcupine.Operation, info procOp) error {
	if info.output == nil {
		if op.Output != nil {
			return fmt.Errorf("operation %d (%T): an environment event has Output %T, want nil", i, op.Input, op.Output)
		}
		return nil
	}
	if op.Output == nil {
		return fmt.Errorf("operation %d (%T): Output is nil; use Unknown{} for an unknown outcome", i, op.Input)
	}
	if _, unknown := op.Output.(Unknown); unknown || reflect.TypeOf(op.Output) == reflect.TypeOf(info.output) {
		return nil
	}
	return fmt.Errorf("operation %d (%T): Output is %T, want %T or Unknown", i, op.Input, op.Output, info.output)
}

// validateDeaths checks that no operation of a dead process is still open
// at its death (or a reboot of its host that began after its first call),
// nor starts after it.
func validateDeaths(ops []porcupine.Operation, infos []procOp, hostOf map[int]string, deathAt map[int]int64, rebootAt map[string][]int64) error {
	firstCall := map[int]int64{}
	for i, op := range ops {
		proc := infos[i].proc
		if first, seen := firstCall[proc]; proc != 0 && (!seen || op.Call < first) {
			firstCall[proc] = op.Call
		}
	}
	for i, op := range ops {
		proc := infos[i].proc
		if proc == 0 {
			continue
		}
		if at, dead := deathAt[proc]; dead && op.Return >= at {
			return fmt.Errorf("operation %d of p%d returns at %d, not before its death at %d", i, proc, op.Return, at)
		}
		for _, at := range rebootAt[hostOf[proc]] {
			if firstCall[proc] < at && op.Return >= at {
				return fmt.Errorf("operation %d of p%d returns at %d, after the reboot of %q at %d killed it", i, proc, op.Return, hostOf[proc], at)
			}
		}
	}
	return nil
}

// checkWitnessFirst is check after two cheap tries at a linearization, the
// operations in call order and in return order: an accepted walk is a
// witness, so the history is linearizable (Ok, what porcupine would answer
// given the time); any rejection goes to check, whose porcupine alone
// answers Illegal or Unknown. It pays where the walks mostly pass: of seeds
// 1-300 of the default campaigns they pass 86% of admission histories and
// 99% of dirlease ones, and cut dirlease's porcupine share 0.64x. Lease
// keeps plain check: the walks pass only 51% of its histories and raised
// its share 1.3x (leasesim bench --baseline, 3 rounds side by side).
//
// walk is the model the walks step: model itself, or a model of the same
// steps on states that are cheaper to pass from step to step (dirlease's
// decoded worlds), which must accept exactly what model accepts.
func checkWitnessFirst(walk, model porcupine.Model, ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	if orderWitness(walk, ops) {
		return porcupine.Ok, porcupine.LinearizationInfo{}
	}
	return check(model, ops, timeout)
}

// check runs the fast check first and reruns the verbose one only on a
// failure, to get the partial linearizations for the report (ExplainIllegal;
// realstress's failure.txt).
// An Ok result comes with an empty LinearizationInfo.
func check(model porcupine.Model, ops []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	result := porcupine.CheckOperationsTimeout(model, ops, timeout)
	if result != porcupine.Illegal {
		return result, porcupine.LinearizationInfo{}
	}
	verbose, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	if verbose == porcupine.Ok {
		panic("models: the verbose check accepted a history the fast check rejected")
	}
	// A verbose rerun that times out is still a failure: keep Illegal.
	return porcupine.Illegal, info
}

// hasher accumulates a hash over state fields for porcupine's Hash, which
// only narrows its Equal comparisons: any function of the fields works, so
// it takes a whole word per step and allocates nothing.
type hasher struct {
	sum uint64
}

func newHasher() hasher { return hasher{sum: 14695981039346656037} }

func (h *hasher) int(v int64) {
	x := h.sum ^ uint64(v)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	h.sum = x ^ x>>31
}

func (h *hasher) bool(v bool) {
	if v {
		h.int(1)
	} else {
		h.int(0)
	}
}

func (h *hasher) string(s string) {
	sum := uint64(14695981039346656037) // FNV-1a over the bytes, in place
	for i := 0; i < len(s); i++ {
		sum ^= uint64(s[i])
		sum *= 1099511628211
	}
	h.int(int64(sum))
}

// escape makes model text safe to embed in porcupine's HTML report.
func escape(s string) string { return html.EscapeString(s) }

// orUnknown renders an unbound generation, claim ID or revision.
func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// stateSetModel is porcupine's NondeterministicModel.ToModel, the power-set
// construction (a model state is the set of states the history may have
// left), for one comparable state type S: the set is a []S, merged with ==
// in the order states appear, so a step allocates one slice instead of
// boxing every state it returns. The initial set is the zero S alone.
type stateSetModel[S comparable] struct {
	partition func(history []porcupine.Operation) [][]porcupine.Operation
	// step returns the states s may move to; the list is new at every call
	// (the model keeps it as the next state set and may modify it).
	step              func(s S, input, output any) []S
	hash              func(s S) uint64
	describeOperation func(input, output any) string
	describeState     func(s S) string
}

// uniqueInPlace drops the repeats from list, keeping first occurrences in
// order, in list's own array.
func uniqueInPlace[S comparable](list []S) []S {
	kept := list[:0]
	for _, s := range list {
		if !slices.Contains(kept, s) {
			kept = append(kept, s)
		}
	}
	return kept
}

// nondeterministic is the same model before the power-set construction:
// one state per model state, for a checker that searches the states
// themselves (realstress's exact segment search) rather than their sets.
func (m stateSetModel[S]) nondeterministic() porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Partition: m.partition,
		Init:      func() []any { var zero S; return []any{zero} },
		Step: func(state, input, output any) []any {
			successors := m.step(state.(S), input, output)
			next := make([]any, len(successors))
			for i, s := range successors {
				next[i] = s
			}
			return next
		},
		Equal:             func(a, b any) bool { return a.(S) == b.(S) },
		Hash:              func(state any) uint64 { return m.hash(state.(S)) },
		DescribeOperation: m.describeOperation,
		DescribeState:     func(state any) string { return m.describeState(state.(S)) },
	}
}

func (m stateSetModel[S]) model() porcupine.Model {
	return porcupine.Model{
		Partition: m.partition,
		Init:      func() any { var zero S; return []S{zero} },
		Step: func(state, input, output any) (bool, any) {
			states := state.([]S)
			if len(states) == 1 { // the common case: one successor list, kept as it is
				next := uniqueInPlace(m.step(states[0], input, output))
				return len(next) > 0, next
			}
			var next []S
			for _, s := range states {
				for _, successor := range m.step(s, input, output) {
					if !slices.Contains(next, successor) {
						next = append(next, successor)
					}
				}
			}
			return len(next) > 0, next
		},
		Equal: func(a, b any) bool {
			first, second := a.([]S), b.([]S)
			if len(first) != len(second) {
				return false
			}
			for _, s := range first {
				if !slices.Contains(second, s) {
					return false
				}
			}
			return true
		},
		Hash: func(state any) uint64 {
			var sum uint64 // XOR: the order of a set's states does not matter
			for _, s := range state.([]S) {
				sum ^= m.hash(s)
			}
			return sum
		},
		DescribeOperation: m.describeOperation,
		DescribeState: func(state any) string {
			var descriptions []string
			for _, s := range state.([]S) {
				descriptions = append(descriptions, m.describeState(s))
			}
			return fmt.Sprintf("{%s}", strings.Join(descriptions, ", "))
		},
	}
}

// orderWitness reports whether the model accepts each partition of ops
// stepped in call order or, failing that, in return order. Both orders
// respect real time: porcupine orders an operation before another only when
// it returns strictly before the other's call (a return and a call at the
// same instant overlap), and then both its call and its return are earlier
// too; operations whose sorting instants tie overlap, so either order is
// allowed. An accepted walk is therefore a linearization; a rejected one
// proves nothing (another order may pass).
func orderWitness(model porcupine.Model, ops []porcupine.Operation) bool {
	partitions := [][]porcupine.Operation{ops}
	if model.Partition != nil {
		partitions = model.Partition(ops)
	}
	for _, partition := range partitions {
		if !acceptsInOrder(model, partition, func(op porcupine.Operation) int64 { return op.Call }) &&
			!acceptsInOrder(model, partition, func(op porcupine.Operation) int64 { return op.Return }) {
			return false
		}
	}
	return true
}

// acceptsInOrder steps the model through ops sorted by instant.
func acceptsInOrder(model porcupine.Model, ops []porcupine.Operation, instant func(porcupine.Operation) int64) bool {
	ordered := slices.Clone(ops)
	slices.SortStableFunc(ordered, func(a, b porcupine.Operation) int { return cmp.Compare(instant(a), instant(b)) })
	state := model.Init()
	for _, op := range ordered {
		var ok bool
		if ok, state = model.Step(state, op.Input, op.Output); !ok {
			return false
		}
	}
	return true
}
