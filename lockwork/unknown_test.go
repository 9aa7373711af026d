package lockwork

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasekit/leasekit/models"
)

// The stance on unknown acquires (package doc, "Unknown outcomes"): each
// row is a history of answers the checker must accept or refuse. Client 0
// is the environment (deaths); each other client is one process.
func TestUnknownAcquireStance(t *testing.T) {
	acquired := func(epoch uint64) any { return models.LockAcquireResult{Kind: models.LockAcquired, Epoch: epoch} }
	held := models.LockAcquireResult{Kind: models.LockHeld}
	released := models.LockReleaseResult{Released: true}
	unknown := models.Unknown{}
	type op struct {
		client        int
		input, output any
	}
	tests := []struct {
		name  string
		rules models.LockRules
		ops   []op
		legal bool
	}{
		{"acquiring again after an unknown acquire nobody saw: it had no effect", models.LockRules{}, []op{
			{1, models.LockAcquire{Proc: 1}, unknown}, {1, models.LockAcquire{Proc: 1}, acquired(1)}}, true},
		{"held to the retry of the process whose unknown acquire took it", models.LockRules{}, []op{
			{1, models.LockAcquire{Proc: 1}, unknown}, {1, models.LockAcquire{Proc: 1}, held}}, true},
		{"acquired again after another process saw the unknown acquire hold it: two holders", models.LockRules{}, []op{
			{1, models.LockAcquire{Proc: 1}, unknown}, {2, models.LockAcquire{Proc: 2}, held},
			{1, models.LockAcquire{Proc: 1}, acquired(1)}}, false},
		{"a token an unknown acquire consumed may be skipped", models.LockRules{DeadHolderFree: true}, []op{
			{1, models.LockAcquire{Proc: 1}, acquired(1)}, {1, models.LockRelease{Proc: 1}, released},
			{2, models.LockAcquire{Proc: 2}, unknown}, {0, models.ProcessDeath{Proc: 2}, nil},
			{3, models.LockAcquire{Proc: 3}, acquired(7)}}, true},
		{"the token of an unknown acquire seen to take the lock is not handed out again", models.LockRules{}, []op{
			{1, models.LockAcquire{Proc: 1}, acquired(1)}, {1, models.LockRelease{Proc: 1}, released},
			{2, models.LockAcquire{Proc: 2}, unknown}, {3, models.LockAcquire{Proc: 3}, held},
			{0, models.ProcessDeath{Proc: 2}, nil}, {3, models.LockAcquire{Proc: 3}, acquired(2)}}, false},
		{"a later holder of that lock gets a token above it", models.LockRules{}, []op{
			{1, models.LockAcquire{Proc: 1}, acquired(1)}, {1, models.LockRelease{Proc: 1}, released},
			{2, models.LockAcquire{Proc: 2}, unknown}, {3, models.LockAcquire{Proc: 3}, held},
			{0, models.ProcessDeath{Proc: 2}, nil}, {3, models.LockAcquire{Proc: 3}, acquired(3)}}, true},
		{"a token of an unknown acquire nothing saw take effect is not checked", models.LockRules{}, []op{
			{1, models.LockAcquire{Proc: 1}, acquired(1)}, {1, models.LockRelease{Proc: 1}, released},
			{2, models.LockAcquire{Proc: 2}, unknown}, {0, models.ProcessDeath{Proc: 2}, nil},
			{3, models.LockAcquire{Proc: 3}, acquired(2)}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := make([]porcupine.Operation, len(tt.ops))
			for i, o := range tt.ops { // one after another: call 2i, return 2i+1
				ops[i] = porcupine.Operation{ClientId: o.client, Call: int64(2 * i), Return: int64(2*i + 1),
					Input: o.input, Output: o.output}
			}
			verdict, _ := models.CheckLock(tt.rules, ops, 10*time.Second)
			if legal := verdict == porcupine.Ok; legal != tt.legal {
				t.Fatalf("checker says legal=%v (%v), want %v", legal, verdict, tt.legal)
			}
		})
	}
}
