package realstress

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/models"
)

// Death is the parent's record of one worker incarnation's end, stamped
// after the process was reaped.
type Death struct {
	Lane   int   `json:"lane"`
	PID    int   `json:"pid"`
	Ns     int64 `json:"ns"`
	Killed bool  `json:"killed"`
}

// History is a merged, checkable history and what it contains.
type History struct {
	Operations []porcupine.Operation
	// Completed operations returned an outcome; Unknown ones did not (the
	// process was killed, or the engine returned an error).
	Completed int
	Unknown   int
	// DroppedInspects are inspects cut short by a kill: read-only, so they
	// are left out (package models, "The history contract").
	DroppedInspects int
	// Reclaims counts the stale owners that acquires moved into
	// quarantine (reported by a known outcome, logged by an acquire cut
	// short): one models.LeaseReclaim window each.
	Reclaims int
	// Deaths counts ProcessDeath events.
	Deaths int
}

// pending is one operation between decoding and stamping.
type pending struct {
	lane          int
	input, output any
	callNs        int64
	returnNs      int64
	unknownReturn bool // bounded by the lane's death
	// reclaimed: the generations an acquire moved into quarantine, as its
	// known outcome reported (AcquireResult.Reclaimed) or, for an unknown
	// outcome, as its reclaim lines logged ("" = not named).
	reclaimed []string
}

// Event classes at one nanosecond: calls first (maximal overlap), then
// returns, then unknown returns, then the deaths that bound them.
const (
	classCall = iota
	classReturn
	classUnknownReturn
	classDeath
)

// BuildHistory merges the lanes' logs and the deaths into a porcupine
// history over the models' types (lease or admission, as the ops say). Every lane must be sequential;
// only a lane's last operation may lack a return, and then the lane must
// have a death that bounds it.
func BuildHistory(lanes map[int][]Record, deaths []Death) (History, error) {
	deathOf := map[int]int64{}
	for _, death := range deaths {
		if _, twice := deathOf[death.Lane]; twice {
			return History{}, fmt.Errorf("lane %d dies twice", death.Lane)
		}
		deathOf[death.Lane] = death.Ns
	}
	var history History
	var ops []pending
	laneIDs := make([]int, 0, len(lanes))
	for lane := range lanes {
		laneIDs = append(laneIDs, lane)
	}
	sort.Ints(laneIDs)
	for _, lane := range laneIDs {
		laneOps, err := pairLane(lane, lanes[lane], deathOf, &history)
		if err != nil {
			return History{}, err
		}
		ops = append(ops, laneOps...)
	}
	history.Operations = appendReclaims(stamp(ops, deaths), ops, laneIDs)
	history.Deaths = len(deaths)
	return history, nil
}

// appendReclaims adds one models.LeaseReclaim per generation a known-outcome
// acquire reported reclaimed. An acquire moves the stale receiver.lock into
// quarantine and installs the new owner in later steps, and a lock-free
// Inspect can see the lease empty in between; the log does not
// show the instant of the move, only that it happened inside the acquire.
// So the reclaim spans the acquire's own [Call, Return], and porcupine
// places it anywhere inside. Each reclaim gets a lane (ClientId) of its
// own, above every worker lane. The model accepts a reclaim only while the
// named generation's owner is dead: a reclaim of a live owner stays the
// two-owners bug.
//
// An acquire cut short (killed, or an engine error) reports nothing: its
// reclaims are the ones its worker logged right after each move
// (reclaimLogFS), over the same window (a superset of the true one, which
// ends at the line). A kill before the line is written also came before
// the install, and the model's unknown acquire covers it: it may leave a
// dead owner's lease empty (reclaimed, then cut short), never a live one's.
func appendReclaims(operations []porcupine.Operation, ops []pending, laneIDs []int) []porcupine.Operation {
	lane := 0
	if len(laneIDs) > 0 {
		lane = laneIDs[len(laneIDs)-1]
	}
	for i, op := range ops {
		if len(op.reclaimed) == 0 {
			continue
		}
		acquire := op.input.(models.LeaseAcquire)
		for _, generation := range op.reclaimed {
			lane++
			operations = append(operations, porcupine.Operation{ClientId: lane,
				Input: models.LeaseReclaim{Namespace: acquire.Namespace, Generation: generation},
				Call:  operations[i].Call, Return: operations[i].Return})
		}
	}
	return operations
}

// pairLane pairs each call with its return and decodes both. An acquire's
// reclaim lines (PhaseReclaim, between its call and its return) give the
// reclaims of an acquire whose outcome is unknown; a known outcome reports
// its own (AcquireResult.Reclaimed).
func pairLane(lane int, records []Record, deathOf map[int]int64, history *History) ([]pending, error) {
	var ops []pending
	for i := 0; i < len(records); i++ {
		call := records[i]
		if call.Phase != PhaseCall || call.Lane != lane {
			return nil, fmt.Errorf("lane %d record %d: want a call of lane %d, got %s of lane %d", lane, i, lane, call.Phase, call.Lane)
		}
		input, err := decodeInput(call)
		if err != nil {
			return nil, fmt.Errorf("lane %d seq %d: %w", lane, call.Seq, err)
		}
		op := pending{lane: lane, input: input, callNs: call.Ns}
		var logged []string
		for i+1 < len(records) && records[i+1].Phase == PhaseReclaim {
			i++
			generation, err := decodeReclaim(call, records[i])
			if err != nil {
				return nil, fmt.Errorf("lane %d seq %d: %w", lane, call.Seq, err)
			}
			logged = append(logged, generation)
		}
		if i+1 == len(records) {
			death, dead := deathOf[lane]
			if !dead {
				return nil, fmt.Errorf("lane %d seq %d: no return and no death to bound it", lane, call.Seq)
			}
			if death <= call.Ns {
				return nil, fmt.Errorf("lane %d seq %d: called at %d, after its death at %d", lane, call.Seq, call.Ns, death)
			}
			if call.Op == OpInspect || call.Op == OpDirUse { // read-only, cut short
				history.DroppedInspects++
				continue
			}
			op.output, op.returnNs, op.unknownReturn = models.Unknown{}, death, true
			op.reclaimed = logged
			history.Unknown++
			history.Reclaims += len(logged)
			ops = append(ops, op)
			continue
		}
		i++
		ret := records[i]
		if ret.Phase != PhaseReturn || ret.Seq != call.Seq || ret.Op != call.Op || ret.Ns < call.Ns {
			return nil, fmt.Errorf("lane %d seq %d: call not followed by its return (got %s seq %d op %s at %d)", lane, call.Seq, ret.Phase, ret.Seq, ret.Op, ret.Ns)
		}
		op.returnNs = ret.Ns
		if op.output, err = decodeOutput(ret); err != nil {
			return nil, fmt.Errorf("lane %d seq %d: %w", lane, call.Seq, err)
		}
		op.reclaimed = logged
		if _, unknown := op.output.(models.Unknown); unknown {
			history.Unknown++
		} else {
			history.Completed++
		}
		if result, ok := op.output.(models.LeaseAcquireResult); ok {
			op.reclaimed = result.Reclaimed
		}
		history.Reclaims += len(op.reclaimed)
		ops = append(ops, op)
	}
	return ops, nil
}

// decodeReclaim checks a reclaim line against the acquire it belongs to
// and returns the reclaimed generation ("" when the name did not say).
func decodeReclaim(call, line Record) (string, error) {
	if call.Op != OpAcquire || line.Op != OpAcquire || line.Seq != call.Seq || line.Lane != call.Lane || line.Ns < call.Ns {
		return "", fmt.Errorf("reclaim line (op %s seq %d at %d) does not belong to the %s call at %d", line.Op, line.Seq, line.Ns, call.Op, call.Ns)
	}
	value, err := decodeAs[models.LeaseReclaim](line.Input)
	if err != nil {
		return "", err
	}
	reclaim := value.(models.LeaseReclaim)
	var acquire models.LeaseAcquire
	if err := json.Unmarshal(call.Input, &acquire); err != nil || reclaim.Namespace != acquire.Namespace {
		return "", fmt.Errorf("reclaim line of namespace %q inside an acquire of another", reclaim.Namespace)
	}
	return reclaim.Generation, nil
}

func decodeInput(call Record) (any, error) {
	switch call.Op {
	case OpAcquire:
		return decodeAs[models.LeaseAcquire](call.Input)
	case OpRelease:
		return decodeAs[models.LeaseRelease](call.Input)
	case OpInspect:
		return decodeAs[models.LeaseInspect](call.Input)
	case OpWithCurrent:
		return decodeAs[models.LeaseWithCurrent](call.Input)
	case OpAdmissionAcquire:
		return decodeAs[models.AdmissionAcquire](call.Input)
	case OpAdmissionRelease:
		return decodeAs[models.AdmissionRelease](call.Input)
	case OpDirCreate:
		return decodeAs[models.DirCreate](call.Input)
	case OpDirUpdate:
		return decodeAs[models.DirUpdate](call.Input)
	case OpDirRelease:
		return decodeAs[models.DirRelease](call.Input)
	case OpDirRecover:
		return decodeAs[models.DirRecover](call.Input)
	case OpDirUse:
		return decodeAs[models.DirUse](call.Input)
	}
	return nil, fmt.Errorf("unknown op %q", call.Op)
}

func decodeOutput(ret Record) (any, error) {
	if len(ret.Output) == 0 {
		if ret.Error == "" {
			return nil, fmt.Errorf("return of %s has neither output nor error", ret.Op)
		}
		return models.Unknown{}, nil
	}
	switch ret.Op {
	case OpAcquire:
		return decodeAs[models.LeaseAcquireResult](ret.Output)
	case OpRelease:
		return decodeAs[models.LeaseReleaseResult](ret.Output)
	case OpInspect:
		return decodeAs[models.LeaseInspectResult](ret.Output)
	case OpWithCurrent:
		return decodeAs[models.LeaseFenceResult](ret.Output)
	case OpAdmissionAcquire:
		return decodeAs[models.AdmissionAcquireResult](ret.Output)
	case OpAdmissionRelease:
		return decodeAs[models.AdmissionReleaseResult](ret.Output)
	case OpDirCreate:
		return decodeAs[models.DirCreateResult](ret.Output)
	case OpDirUpdate:
		return decodeAs[models.DirUpdateResult](ret.Output)
	case OpDirRelease:
		return decodeAs[models.DirReleaseResult](ret.Output)
	case OpDirRecover:
		return decodeAs[models.DirRecoverResult](ret.Output)
	case OpDirUse:
		return decodeAs[models.DirUseResult](ret.Output)
	}
	return nil, fmt.Errorf("unknown op %q", ret.Op)
}

func decodeAs[T any](data json.RawMessage) (any, error) {
	var value T
	if err := json.Unmarshal(data, &value); err != nil {
		return nil, fmt.Errorf("decoding %T: %w", value, err)
	}
	return value, nil
}

// stamp turns nanosecond times into distinct porcupine stamps. Death events
// use ClientId 0, a lane of their own.
func stamp(ops []pending, deaths []Death) []porcupine.Operation {
	type event struct {
		ns    int64
		class int
		op    int // index into ops, or -1-death index
		call  bool
	}
	events := make([]event, 0, 2*len(ops)+len(deaths))
	for i, op := range ops {
		events = append(events, event{ns: op.callNs, class: classCall, op: i, call: true})
		class := classReturn
		if op.unknownReturn {
			class = classUnknownReturn
		}
		events = append(events, event{ns: op.returnNs, class: class, op: i})
	}
	for i, death := range deaths {
		events = append(events, event{ns: death.Ns, class: classDeath, op: -1 - i})
	}
	sort.SliceStable(events, func(a, b int) bool {
		if events[a].ns != events[b].ns {
			return events[a].ns < events[b].ns
		}
		return events[a].class < events[b].class
	})
	result := make([]porcupine.Operation, len(ops), len(ops)+len(deaths))
	for at, e := range events {
		stampAt := int64(at + 1)
		switch {
		case e.op < 0:
			result = append(result, porcupine.Operation{ClientId: 0,
				Input: models.ProcessDeath{Proc: deaths[-1-e.op].Lane}, Call: stampAt, Return: stampAt})
		case e.call:
			result[e.op] = porcupine.Operation{ClientId: ops[e.op].lane, Input: ops[e.op].input,
				Output: ops[e.op].output, Call: stampAt}
		default:
			result[e.op].Return = stampAt
		}
	}
	for i := range ops {
		if result[i].Return <= result[i].Call {
			panic(fmt.Sprintf("realstress: op %d stamped [%d, %d]", i, result[i].Call, result[i].Return))
		}
	}
	return result
}
