package models

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// lockHistory builds a history from (client, call, return, input, output)
// rows; client 0 is the environment lane.
type lockRow struct {
	client        int
	call, ret     int64
	input, output any
}

func lockOps(rows []lockRow) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(rows))
	for i, r := range rows {
		ops[i] = porcupine.Operation{ClientId: r.client, Call: r.call, Return: r.ret, Input: r.input, Output: r.output}
	}
	return ops
}

func lockAcq(epoch uint64) LockAcquireResult {
	return LockAcquireResult{Kind: LockAcquired, Epoch: epoch}
}

var (
	lockHeldOut     = LockAcquireResult{Kind: LockHeld}
	lockRefusedOut  = LockAcquireResult{Kind: LockRefused}
	lockReleasedOut = LockReleaseResult{Released: true}
	lockNotOwnerOut = LockReleaseResult{Released: false}
)

func TestLockModel(t *testing.T) {
	strict := LockRules{DeadHolderFree: true}
	loose := LockRules{}
	tests := []struct {
		name  string
		rules LockRules
		rows  []lockRow
		ok    bool
	}{
		{"acquire release acquire", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {1, 3, 4, LockRelease{1}, lockReleasedOut},
			{2, 5, 6, LockAcquire{2}, lockAcq(2)}}, true},
		{"held while a live holder holds", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {2, 3, 4, LockAcquire{2}, lockHeldOut}}, true},
		{"refused any time", strict, []lockRow{{2, 1, 2, LockAcquire{2}, lockRefusedOut}}, true},
		{"takeover after the holder died", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {0, 3, 3, ProcessDeath{1}, nil},
			{2, 4, 5, LockAcquire{2}, lockAcq(2)}}, true},
		{"concurrent acquires, one wins", strict, []lockRow{
			{1, 1, 4, LockAcquire{1}, lockAcq(1)}, {2, 2, 3, LockAcquire{2}, lockHeldOut}}, true},
		{"a crashed acquire may have taken it", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, Unknown{}}, {2, 3, 4, LockAcquire{2}, lockHeldOut}}, true},
		{"a crashed acquire, then death: held is illegal under DeadHolderFree", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, Unknown{}}, {0, 3, 3, ProcessDeath{1}, nil}, {2, 4, 5, LockAcquire{2}, lockHeldOut}}, false},
		{"a crashed acquire, then death: held is legal for a timeout lock", loose, []lockRow{
			{1, 1, 2, LockAcquire{1}, Unknown{}}, {0, 3, 3, ProcessDeath{1}, nil}, {2, 4, 5, LockAcquire{2}, lockHeldOut}}, true},
		{"an epoch after an unknown acquire must be above it", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {1, 3, 4, LockRelease{1}, lockReleasedOut},
			{2, 5, 6, LockAcquire{2}, Unknown{}}, {0, 7, 7, ProcessDeath{2}, nil},
			{3, 8, 9, LockAcquire{3}, lockAcq(2)}}, true},
		{"not owner for a process that never held it", strict, []lockRow{{2, 1, 2, LockRelease{2}, lockNotOwnerOut}}, true},
		{"a crashed release may have released", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {1, 3, 4, LockRelease{1}, Unknown{}},
			{2, 5, 6, LockAcquire{2}, lockAcq(2)}}, true},

		// Planted bad histories.
		{"two holders", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {2, 3, 4, LockAcquire{2}, lockAcq(2)}}, false},
		{"two holders without epochs", loose, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(0)}, {2, 3, 4, LockAcquire{2}, lockAcq(0)}}, false},
		{"epoch going back", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(5)}, {1, 3, 4, LockRelease{1}, lockReleasedOut},
			{2, 5, 6, LockAcquire{2}, lockAcq(5)}}, false},
		{"epoch going back after a takeover", loose, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(3)}, {0, 3, 3, ProcessDeath{1}, nil},
			{2, 4, 5, LockAcquire{2}, lockAcq(2)}}, false},
		{"release by a non-owner succeeds", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {2, 3, 4, LockRelease{2}, lockReleasedOut}}, false},
		{"not owner answered to the owner", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {1, 3, 4, LockRelease{1}, lockNotOwnerOut}}, false},
		{"held with no holder", loose, []lockRow{{2, 1, 2, LockAcquire{2}, lockHeldOut}}, false},
		{"held by a dead holder (PID liveness lock)", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {0, 3, 3, ProcessDeath{1}, nil},
			{2, 4, 5, LockAcquire{2}, lockHeldOut}}, false},
		{"a dead holder never frees the lock by itself for a live one", strict, []lockRow{
			{1, 1, 2, LockAcquire{1}, lockAcq(1)}, {0, 3, 3, ProcessDeath{2}, nil},
			{2, 4, 5, LockAcquire{2}, lockAcq(2)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			result, _ := CheckLock(tt.rules, lockOps(tt.rows), 5*time.Second)
			if (result == porcupine.Ok) != tt.ok {
				t.Fatalf("got %v, want ok=%v", result, tt.ok)
			}
		})
	}
}

func TestDescribeLockOperation(t *testing.T) {
	for input, want := range map[[2]any]string{
		{LockAcquire{3}, lockAcq(7)}:      "p3 Acquire -> acquired epoch 7",
		{LockAcquire{3}, lockHeldOut}:     "p3 Acquire -> held",
		{LockRelease{2}, lockNotOwnerOut}: "p2 Release -> not owner",
		{LockRelease{2}, Unknown{}}:       "p2 Release -> unknown",
		{ProcessDeath{4}, nil}:            "ProcessDeath(p4)",
	} {
		if got := DescribeLockOperation(input[0], input[1]); got != want {
			t.Errorf("DescribeLockOperation(%v) = %q, want %q", input, got, want)
		}
	}
}
