package realstress_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/realstress"
)

// BuildHistory merges the workers' per-lane logs (a call line before each
// operation, a return line after) and the parent's death stamps into one
// porcupine history for models.CheckLease. Lane 1 acquires, then is
// SIGKILLed inside an inspect: the inspect has no return line and, being
// read-only, is dropped. Lane 2 then acquires by reclaiming lane 1's
// generation, and releases. Legal when the reclaim happens after the death
// stamp; a violation when lane 2's acquire returned before lane 1 died,
// since it reclaimed a live owner.
func ExampleBuildHistory() {
	for _, deathNs := range []int64{300, 550} {
		lanes := map[int][]realstress.Record{
			1: append(
				operation(1, 1, realstress.OpAcquire, 100, 200,
					models.LeaseAcquire{Namespace: "/ns", Proc: 1, Host: "h", Session: "s1"},
					models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: "g1", Epoch: 1}),
				callOnly(1, 2, realstress.OpInspect, 250, models.LeaseInspect{Namespace: "/ns", Proc: 1})...),
			2: append(
				operation(2, 1, realstress.OpAcquire, 400, 500,
					models.LeaseAcquire{Namespace: "/ns", Proc: 2, Host: "h", Session: "s2"},
					models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: "g2", Epoch: 2, Reclaimed: []string{"g1"}}),
				operation(2, 2, realstress.OpRelease, 600, 700,
					models.LeaseRelease{Namespace: "/ns", Proc: 2, Generation: "g2", Session: "s2"},
					models.LeaseReleaseResult{Kind: models.LeaseReleased})...),
		}
		deaths := []realstress.Death{{Lane: 1, PID: 4242, Ns: deathNs, Killed: true}}
		history, err := realstress.BuildHistory(lanes, deaths)
		if err != nil {
			panic(err)
		}
		verdict, _ := models.CheckLease(history.Operations, 5*time.Second)
		fmt.Printf("lane 1 killed at %dns: %s\n", deathNs, verdict)
		fmt.Printf("  %d operations: %d completed, %d unknown, %d inspect dropped, %d reclaim, %d death\n",
			len(history.Operations), history.Completed, history.Unknown, history.DroppedInspects,
			history.Reclaims, history.Deaths)
	}
	// Output:
	// lane 1 killed at 300ns: Ok
	//   5 operations: 3 completed, 0 unknown, 1 inspect dropped, 1 reclaim, 1 death
	// lane 1 killed at 550ns: Illegal
	//   5 operations: 3 completed, 0 unknown, 1 inspect dropped, 1 reclaim, 1 death
}

// operation is a lane's call line and return line for one operation.
func operation(lane, seq int, op string, callNs, returnNs int64, input, output any) []realstress.Record {
	return append(callOnly(lane, seq, op, callNs, input), realstress.Record{
		Lane: lane, Seq: seq, Phase: realstress.PhaseReturn, Op: op, Output: encode(output), Ns: returnNs})
}

// callOnly is the call line of an operation whose worker died before it
// could log the return.
func callOnly(lane, seq int, op string, callNs int64, input any) []realstress.Record {
	return []realstress.Record{{Lane: lane, Seq: seq, Phase: realstress.PhaseCall, Op: op, Input: encode(input), Ns: callNs}}
}

func encode(value any) json.RawMessage {
	data, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	return data
}
