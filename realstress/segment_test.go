package realstress

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/leasekit/leasekit/models"
)

func op(lane int, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: lane, Call: call, Return: ret}
}

func TestSegmentsCutOnlyAtStrictGaps(t *testing.T) {
	cases := []struct {
		name   string
		ops    []porcupine.Operation
		minOps int
		want   []int // segment sizes
	}{
		{"empty", nil, 1, nil},
		{"one", []porcupine.Operation{op(1, 1, 2)}, 1, []int{1}},
		{"gaps everywhere", []porcupine.Operation{op(1, 1, 2), op(1, 3, 4), op(2, 5, 6)}, 1, []int{1, 1, 1}},
		// [1,3] and [3,4] share stamp 3: porcupine's intervals are closed,
		// so they overlap and no cut may separate them.
		{"touching is overlapping", []porcupine.Operation{op(1, 1, 3), op(2, 3, 4), op(1, 5, 6)}, 1, []int{2, 1}},
		// A long operation spans later short ones: no gap until it returns.
		{"long op spans", []porcupine.Operation{op(1, 1, 10), op(2, 2, 3), op(2, 4, 5), op(3, 11, 12)}, 1, []int{3, 1}},
		{"minimum size", []porcupine.Operation{op(1, 1, 2), op(1, 3, 4), op(1, 5, 6), op(1, 7, 8), op(1, 9, 10)}, 2, []int{2, 2, 1}},
		// Order in the input does not matter: cuts are by call stamp.
		{"unsorted input", []porcupine.Operation{op(2, 5, 6), op(1, 1, 2), op(1, 3, 4)}, 1, []int{1, 1, 1}},
		{"instant events", []porcupine.Operation{op(1, 1, 4), op(0, 2, 2), op(0, 5, 5)}, 1, []int{2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			segments := Segments(c.ops, c.minOps)
			var sizes []int
			for _, segment := range segments {
				sizes = append(sizes, len(segment))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(c.want) {
				t.Fatalf("segment sizes %v, want %v", sizes, c.want)
			}
			// Every cut is quiescent: all earlier ops return before the
			// first call after it.
			var lastReturn int64 = -1
			for i, segment := range segments {
				for _, o := range segment {
					if i > 0 && o.Call <= lastReturn {
						t.Fatalf("segment %d calls at %d, not after the return %d of an earlier segment", i, o.Call, lastReturn)
					}
				}
				for _, o := range segment {
					lastReturn = max(lastReturn, o.Return)
				}
			}
		})
	}
}

// registerModel is a toy register: Write(v) sets it, Read returns it. Two
// concurrent writes leave either value, so a cut after them has two end
// states.
type registerWrite struct{ value int }
type registerRead struct{}

func registerModel(stepDelay time.Duration) porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Init: func() []any { return []any{0} },
		Step: func(state, input, output any) []any {
			time.Sleep(stepDelay)
			switch in := input.(type) {
			case registerWrite:
				return []any{in.value}
			case registerRead:
				if output.(int) == state.(int) {
					return []any{state}
				}
				return nil
			}
			panic(fmt.Sprintf("register model input %T", input))
		},
	}
}

func TestCheckSegmentedCarriesEveryEndState(t *testing.T) {
	// Segment 1: two concurrent writes (1 and 2). Segment 2: a read.
	history := func(read int) []porcupine.Operation {
		return []porcupine.Operation{
			{ClientId: 1, Input: registerWrite{1}, Call: 1, Return: 4},
			{ClientId: 2, Input: registerWrite{2}, Call: 2, Return: 3},
			{ClientId: 1, Input: registerRead{}, Output: read, Call: 5, Return: 6},
		}
	}
	for _, c := range []struct {
		read int
		want porcupine.CheckResult
	}{{1, porcupine.Ok}, {2, porcupine.Ok}, {0, porcupine.Illegal}, {3, porcupine.Illegal}} {
		// The writes' segment ends in 1 or 2; a check that carried one
		// linearization's end state would refuse one of the two legal reads.
		ops := history(c.read)
		model := registerModel(0)
		whole := porcupine.CheckOperations(model.ToModel(), ops)
		got := checkExact(model, ops, 1, time.Now().Add(time.Minute))
		if got.Segments != 2 {
			t.Fatalf("read %d: %d segments, want 2", c.read, got.Segments)
		}
		if got.Result != c.want || whole != (c.want == porcupine.Ok) {
			t.Fatalf("read %d: segmented %v, whole %v, want %v", c.read, got.Result, whole, c.want)
		}
		if c.want == porcupine.Illegal && (len(got.Failed) != 1 || got.Failed[0].Input != (registerRead{})) {
			t.Fatalf("read %d: failed segment %+v, want the read", c.read, got.Failed)
		}
	}
}

// longLeaseHistory is rounds of: lane A acquires (epoch r), lane B's
// concurrent acquire sees it held, A releases; a gap between rounds. At
// round plant, B's acquire claims the lease too: two live owners.
func longLeaseHistory(rounds, plant int) []porcupine.Operation {
	var ops []porcupine.Operation
	for r := 1; r <= rounds; r++ {
		base := int64(r) * 10
		a, b := 1+r%4, 1+(r+1)%4
		session, generation := fmt.Sprintf("s%d", r), fmt.Sprintf("g%d", r)
		acquire := func(lane int, session string) models.LeaseAcquire {
			return models.LeaseAcquire{Namespace: testNamespace, Proc: lane, Host: "h", Session: session}
		}
		held := models.LeaseAcquireResult{Kind: models.LeaseHeld, Generation: generation, Epoch: int64(r), Session: session}
		if r == plant {
			held = models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: "planted", Epoch: int64(r) + 1}
		}
		ops = append(ops,
			porcupine.Operation{ClientId: a, Input: acquire(a, session), Call: base, Return: base + 2,
				Output: models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: generation, Epoch: int64(r)}},
			porcupine.Operation{ClientId: b, Input: acquire(b, fmt.Sprintf("b%d", r)), Call: base + 1, Return: base + 4, Output: held},
			porcupine.Operation{ClientId: a, Input: models.LeaseRelease{Namespace: testNamespace, Proc: a, Generation: generation, Session: session},
				Call: base + 5, Return: base + 6, Output: models.LeaseReleaseResult{Kind: models.LeaseReleased}})
	}
	return ops
}

// TestCheckSegmentedFindsAPlantedViolation: a violation in the middle of a
// long lease history is found after segmenting, in the segment that holds
// it, and the clean history passes, cut into many segments.
func TestCheckSegmentedFindsAPlantedViolation(t *testing.T) {
	const rounds = 3000
	clean := CheckSegmented(models.LeaseNondeterministicModel(), longLeaseHistory(rounds, 0), 300, time.Minute)
	if clean.Result != porcupine.Ok || clean.Segments < 10 {
		t.Fatalf("clean history: %v in %d segments", clean.Result, clean.Segments)
	}
	planted := longLeaseHistory(rounds, rounds/2)
	if err := models.ValidateLeaseHistory(planted); err != nil {
		t.Fatal(err)
	}
	got := CheckSegmented(models.LeaseNondeterministicModel(), planted, 300, time.Minute)
	if got.Result != porcupine.Illegal {
		t.Fatalf("planted violation: %v", got.Result)
	}
	found := false
	for _, o := range got.Failed {
		if out, ok := o.Output.(models.LeaseAcquireResult); ok && out.Generation == "planted" {
			found = true
		}
	}
	if !found || got.Segments < 5 {
		t.Fatalf("the failed segment (%d of them checked) does not hold the planted acquire", got.Segments)
	}
	if len(got.Info.PartialLinearizationsOperations()) == 0 {
		t.Fatal("no linearization info for the report")
	}
	if whole, _ := models.CheckLease(planted, time.Minute); whole != porcupine.Illegal {
		t.Fatalf("the whole-history check says %v", whole)
	}
}

// TestCheckSegmentedTimeoutIsUnknown: running out of time is Unknown,
// never Ok and never Illegal, whether the budget is gone before a segment
// or porcupine stops inside one.
func TestCheckSegmentedTimeoutIsUnknown(t *testing.T) {
	var ops []porcupine.Operation
	for i := range 200 {
		ops = append(ops, porcupine.Operation{ClientId: 1, Input: registerWrite{i}, Call: int64(2*i + 1), Return: int64(2*i + 2)})
	}
	for _, c := range []struct {
		name    string
		delay   time.Duration
		timeout time.Duration
	}{{"budget spent", 0, time.Nanosecond}, {"inside a segment", time.Millisecond, 30 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckSegmented(registerModel(c.delay), ops, 50, c.timeout)
			if got.Result != porcupine.Unknown {
				t.Fatalf("result %v, want Unknown", got.Result)
			}
			if checkName(got.Result) != "unknown" {
				t.Fatalf("reported as %q", checkName(got.Result))
			}
		})
	}
}

// TestCheckSegmentedAgreesWithPorcupine: on random register histories (three
// clients, overlapping writes and reads, some reads of values never
// written), CheckSegmented's verdict, and the exact search's whatever the
// segment size, is porcupine's on the whole history.
func TestCheckSegmentedAgreesWithPorcupine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var ops []porcupine.Operation
		clock := int64(0)
		free := [3]int64{} // the stamp after each client's last return
		for range rapid.IntRange(1, 14).Draw(t, "ops") {
			clock += rapid.Int64Range(1, 3).Draw(t, "advance")
			client := rapid.IntRange(0, 2).Draw(t, "client")
			call := max(clock, free[client])
			ret := call + rapid.Int64Range(0, 8).Draw(t, "length")
			free[client] = ret + 1
			operation := porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: registerWrite{rapid.IntRange(1, 2).Draw(t, "value")}}
			if rapid.Bool().Draw(t, "read") {
				operation.Input, operation.Output = registerRead{}, rapid.IntRange(0, 2).Draw(t, "read value")
			}
			ops = append(ops, operation)
		}
		stamps := distinctStamps(ops)
		model := registerModel(0)
		whole := porcupine.CheckOperations(model.ToModel(), stamps)
		if got := CheckSegmented(model, stamps, 1, time.Minute); (got.Result == porcupine.Ok) != whole {
			t.Fatalf("CheckSegmented: %v (fast pass %t), porcupine on the whole history: linearizable=%t", got.Result, got.Witness, whole)
		}
		for _, minOps := range []int{1, 3, len(stamps)} {
			got := checkExact(model, stamps, minOps, time.Now().Add(time.Minute))
			if got.Result != porcupine.Ok && got.Result != porcupine.Illegal {
				t.Fatalf("segments of %d: %v", minOps, got.Result)
			}
			if (got.Result == porcupine.Ok) != whole {
				t.Fatalf("segments of %d: %v, porcupine on the whole history: linearizable=%t", minOps, got.Result, whole)
			}
		}
	})
}

// distinctStamps makes every stamp distinct, as the stress's histories
// are (calls before returns at a tie: more overlap, never a false order).
func distinctStamps(ops []porcupine.Operation) []porcupine.Operation {
	type event struct {
		at    int64
		isRet bool
		index int
	}
	var events []event
	for i, o := range ops {
		events = append(events, event{o.Call, false, i}, event{o.Return, true, i})
	}
	sort.SliceStable(events, func(a, b int) bool {
		if events[a].at != events[b].at {
			return events[a].at < events[b].at
		}
		return !events[a].isRet && events[b].isRet
	})
	out := append([]porcupine.Operation(nil), ops...)
	for stamp, e := range events {
		if e.isRet {
			out[e.index].Return = int64(stamp)
		} else {
			out[e.index].Call = int64(stamp)
		}
	}
	return out
}

// TestFastPassCarriesItsEndStates: the fast pass's segments are long, so a
// history of two of them (writes of 1, then reads) checks what the first
// one's linearization left: a read of 1 is Ok at once, and a read of the
// initial 0 is Illegal, never accepted from a fresh start.
func TestFastPassCarriesItsEndStates(t *testing.T) {
	history := func(read int) []porcupine.Operation {
		var ops []porcupine.Operation
		for i := range 2 * witnessSegmentOps {
			operation := porcupine.Operation{ClientId: 1, Input: registerWrite{1}, Call: int64(2*i + 1), Return: int64(2*i + 2)}
			if i >= witnessSegmentOps {
				operation.Input, operation.Output = registerRead{}, read
			}
			ops = append(ops, operation)
		}
		return ops
	}
	if got := CheckSegmented(registerModel(0), history(1), 1, time.Minute); got.Result != porcupine.Ok || !got.Witness {
		t.Fatalf("reads of the written 1: %v (fast pass %t), want Ok from the fast pass", got.Result, got.Witness)
	}
	if got := CheckSegmented(registerModel(0), history(0), 1, time.Minute); got.Result != porcupine.Illegal {
		t.Fatalf("reads of the initial 0 after writes of 1: %v (fast pass %t), want Illegal", got.Result, got.Witness)
	}
}
