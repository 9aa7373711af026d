package lockwork

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
)

// Two clients told acquired, one after the other, with no release between:
// the sentence names the second answer and the state that refutes it.
func TestExplainIllegalNamesTheUnplaceableAnswer(t *testing.T) {
	acquired := models.LockAcquireResult{Kind: models.LockAcquired}
	history := []sim.Operation{
		{Lane: 1, Proc: "client-0", Op: opAcquire, Output: acquired, Call: 1000, Return: 2000, CallOrder: 1, ReturnOrder: 2},
		{Lane: 2, Proc: "client-1", Op: opAcquire, Output: acquired, Call: 3000, Return: 40012000, CallOrder: 3, ReturnOrder: 4},
	}
	ops := Operations(history)
	verdict, info := models.CheckLock(models.LockRules{}, ops, checkTime)
	if verdict != porcupine.Illegal {
		t.Fatalf("verdict %v, want Illegal", verdict)
	}
	got := explainIllegal(history, ops, models.LockRules{}, info)
	want := "client-1 was told p2 Acquire -> acquired at 40.012ms, but in the longest order that fits " +
		"(1 of 2 operations) the lock was held by p1, epoch 0 (p1 = client-0, p2 = client-1)"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
