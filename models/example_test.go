package models_test

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/models"
)

// CheckLease judges a recorded history against the lease specification. In
// the legal history one process acquires, fences and releases, then a second
// acquires the next generation. In the illegal one the second process is
// granted the lease by reclaiming the first while the first still passes its
// fence afterwards: two owners at once, which no order of the calls explains.
// ExplainIllegal says where the linearization stops: nothing recorded made
// the live owner p1 stale, so the reclaim cannot follow its grant.
func ExampleCheckLease() {
	legal := []porcupine.Operation{
		call(1, 1, 2, acquire(1, "s1"), acquired("g1", 1)),
		call(1, 3, 4, fence(1, "g1", "s1"), models.LeaseFenceResult{Kind: models.FenceOK}),
		call(1, 5, 6, release(1, "g1", "s1"), models.LeaseReleaseResult{Kind: models.LeaseReleased}),
		call(2, 7, 8, acquire(2, "s2"), acquired("g2", 2)),
	}
	illegal := []porcupine.Operation{
		call(1, 1, 2, acquire(1, "s1"), acquired("g1", 1)),
		call(2, 3, 4, acquire(2, "s2"), acquired("g2", 2, "g1")),
		call(1, 5, 6, fence(1, "g1", "s1"), models.LeaseFenceResult{Kind: models.FenceOK}),
	}
	for _, history := range []struct {
		name string
		ops  []porcupine.Operation
	}{{"legal", legal}, {"illegal", illegal}} {
		if err := models.ValidateLeaseHistory(history.ops); err != nil {
			panic(err) // the history breaks the recording contract
		}
		verdict, info := models.CheckLease(history.ops, 5*time.Second)
		fmt.Printf("%s: %s\n", history.name, verdict)
		if verdict == porcupine.Illegal {
			fmt.Print(models.ExplainIllegal(models.LeaseModel(), history.ops, info))
		}
	}
	// Output:
	// legal: Ok
	// illegal: Illegal
	// partition 0 (3 operations): longest partial linearization has 1:
	//   [1,2] lane 1: p1 Acquire(jobs, session s1) -> acquired(gen g1, epoch 1)
	//       state: {owned(p1@alpha alive, session s1, gen g1, epoch 1)}
	//   none of these could follow it:
	//   [3,4] lane 2: p2 Acquire(jobs, session s2) -> acquired(gen g2, epoch 2, reclaimed g1)
}

const namespace = "jobs"

// call is one engine call on a lane, between two global stamps.
func call(lane int, start, end int64, input, output any) porcupine.Operation {
	return porcupine.Operation{ClientId: lane, Call: start, Return: end, Input: input, Output: output}
}

func acquire(proc int, session string) models.LeaseAcquire {
	return models.LeaseAcquire{Namespace: namespace, Proc: proc, Host: "alpha", Session: session}
}

func acquired(generation string, epoch int64, reclaimed ...string) models.LeaseAcquireResult {
	return models.LeaseAcquireResult{Kind: models.LeaseAcquired, Generation: generation, Epoch: epoch, Reclaimed: reclaimed}
}

func fence(proc int, generation, session string) models.LeaseWithCurrent {
	return models.LeaseWithCurrent{Namespace: namespace, Proc: proc, Generation: generation, Session: session}
}

func release(proc int, generation, session string) models.LeaseRelease {
	return models.LeaseRelease{Namespace: namespace, Proc: proc, Generation: generation, Session: session}
}
