package models

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// The Example is in package models, not models_test: an external test
// package would import models, and TestImportsArePorcupineAndStdlibOnly
// allows no import but porcupine and the standard library in this directory.

// CheckLease judges a recorded history against the lease specification. In
// the legal history one process acquires, fences and releases, then a second
// acquires the next generation. In the illegal one the second process is
// granted the lease by reclaiming the first while the first still passes its
// fence afterwards: two owners at once, which no order of the calls explains.
// ExplainIllegal says where the linearization stops: nothing recorded made
// the live owner p1 stale, so the reclaim cannot follow its grant.
func ExampleCheckLease() {
	legal := []porcupine.Operation{
		exampleCall(1, 1, 2, exampleAcquire(1, "s1"), exampleAcquired("g1", 1)),
		exampleCall(1, 3, 4, exampleFence(1, "g1", "s1"), LeaseFenceResult{Kind: FenceOK}),
		exampleCall(1, 5, 6, exampleRelease(1, "g1", "s1"), LeaseReleaseResult{Kind: LeaseReleased}),
		exampleCall(2, 7, 8, exampleAcquire(2, "s2"), exampleAcquired("g2", 2)),
	}
	illegal := []porcupine.Operation{
		exampleCall(1, 1, 2, exampleAcquire(1, "s1"), exampleAcquired("g1", 1)),
		exampleCall(2, 3, 4, exampleAcquire(2, "s2"), exampleAcquired("g2", 2, "g1")),
		exampleCall(1, 5, 6, exampleFence(1, "g1", "s1"), LeaseFenceResult{Kind: FenceOK}),
	}
	for _, history := range []struct {
		name string
		ops  []porcupine.Operation
	}{{"legal", legal}, {"illegal", illegal}} {
		if err := ValidateLeaseHistory(history.ops); err != nil {
			panic(err) // the history breaks the recording contract
		}
		verdict, info := CheckLease(history.ops, 5*time.Second)
		fmt.Printf("%s: %s\n", history.name, verdict)
		if verdict == porcupine.Illegal {
			fmt.Print(ExplainIllegal(LeaseModel(), history.ops, info))
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

const exampleNamespace = "jobs"

// exampleCall is one engine call on a lane, between two global stamps.
func exampleCall(lane int, start, end int64, input, output any) porcupine.Operation {
	return porcupine.Operation{ClientId: lane, Call: start, Return: end, Input: input, Output: output}
}

func exampleAcquire(proc int, session string) LeaseAcquire {
	return LeaseAcquire{Namespace: exampleNamespace, Proc: proc, Host: "alpha", Session: session}
}

func exampleAcquired(generation string, epoch int64, reclaimed ...string) LeaseAcquireResult {
	return LeaseAcquireResult{Kind: LeaseAcquired, Generation: generation, Epoch: epoch, Reclaimed: reclaimed}
}

func exampleFence(proc int, generation, session string) LeaseWithCurrent {
	return LeaseWithCurrent{Namespace: exampleNamespace, Proc: proc, Generation: generation, Session: session}
}

func exampleRelease(proc int, generation, session string) LeaseRelease {
	return LeaseRelease{Namespace: exampleNamespace, Proc: proc, Generation: generation, Session: session}
}
