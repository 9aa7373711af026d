package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// swappedIn is p1's claim c1 on /w1 and p2's claim c2 on /w2, and a
// co-tenant renaming a copy of c2's file over c1's.
func swappedIn() []porcupine.Operation {
	return []porcupine.Operation{
		call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
		call(2, 3, 4, dirCreate(2, "/w2", RoleRawWorking, 100), created("c2")),
		event(5, DirClaimSwap{Path: "/w1"}),
	}
}

func TestDirLeaseClaimSwappedIn(t *testing.T) {
	update := dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0)
	release := DirRelease{Proc: 1, Path: "/w1", ClaimID: "c1", Phase: DirPreparing}
	runCases(t, []historyCase{
		{"the swapped claim's owner's update is refused", with(swappedIn(),
			call(1, 6, 7, update, dirChanged),
		), porcupine.Ok},
		{"the swapped claim's owner's update cannot win", with(swappedIn(),
			call(1, 6, 7, update, dirOK),
		), porcupine.Illegal},
		{"the swapped claim's owner's release cannot win", with(swappedIn(),
			call(1, 6, 7, release, dirReleased),
		), porcupine.Illegal},
		{"the other claim's owner is not affected", with(swappedIn(),
			call(2, 6, 7, dirUpdate(2, "/w2", "c2", DirPreparing, DirLaunching, 0, 0), dirOK),
		), porcupine.Ok},
		{"a recovery fails closed while the claim is swapped in", with(swappedIn(),
			call(3, 6, 7, recoverAt(3, 0), DirRecoverResult{Failed: true}),
		), porcupine.Ok},
		{"a recovery that read the swapped claim and succeeds is a finding", with(swappedIn(),
			call(3, 6, 7, recoverAt(3, 0), readSwapped(recovered(0, 0, 2, 0))),
		), porcupine.Illegal},
		{"a recovery that read the claims before the swap may succeed", with(swappedIn(),
			call(3, 6, 7, recoverAt(3, 0), recovered(0, 0, 2, 0)),
		), porcupine.Ok},
		{"a recovery placed inside the swap leaves the swapped claim alone", with(swappedIn(),
			event(6, ProcessDeath{Proc: 1}),
			call(3, 7, 8, recoverAt(3, 0), recovered(1, 0, 1, 0)),
		), porcupine.Illegal},
		{"a pass that read before the swap and one after the return each fit their own instants", with(nil,
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(2, 3, 4, dirCreate(2, "/w2", RoleRawWorking, 100), created("c2")),
			call(4, 5, 6, dirCreate(4, "/w4", RoleRawWorking, 100), created("c4")),
			event(7, DirClaimSwap{Path: "/w1"}),
			event(8, ProcessDeath{Proc: 4}),
			call(3, 5, 12, recoverAt(3, 0), recovered(1, 0, 2, 0)),
			event(9, DirClaimSwap{Path: "/w2"}),
			event(10, DirClaimReturn{Path: "/w1"}),
		), porcupine.Ok},
		{"across the swaps a live owner's claim is still never recovered", with(nil,
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(2, 3, 4, dirCreate(2, "/w2", RoleRawWorking, 100), created("c2")),
			call(4, 5, 6, dirCreate(4, "/w4", RoleRawWorking, 100), created("c4")),
			event(7, DirClaimSwap{Path: "/w1"}),
			call(3, 8, 12, recoverAt(3, 0), recovered(1, 0, 2, 0)),
			event(9, DirClaimSwap{Path: "/w2"}),
			event(10, DirClaimReturn{Path: "/w1"}),
		), porcupine.Illegal},
		{"once the operator returned the owner's bytes, recovery and the owner's update succeed", with(swappedIn(),
			event(6, DirClaimReturn{Path: "/w1"}),
			call(3, 7, 8, recoverAt(3, 0), recovered(0, 0, 2, 0)),
			call(1, 9, 10, update, dirOK),
		), porcupine.Ok},
		{"a dead owner's swapped claim stays tracked: a pass still must fail", with(swappedIn(),
			event(6, ProcessDeath{Proc: 1}),
			call(3, 7, 8, recoverAt(3, 0), DirRecoverResult{Failed: true}),
			call(3, 9, 10, recoverAt(3, 0), readSwapped(recovered(0, 0, 1, 0))),
		), porcupine.Illegal},
		{"a dead owner's swapped claim is never recovered through its name", with(swappedIn(),
			event(6, ProcessDeath{Proc: 1}),
			call(3, 9, 10, recoverAt(3, 0), recovered(1, 0, 1, 0)),
		), porcupine.Illegal},
	}, CheckDirLease)
}

func readSwapped(out DirRecoverResult) DirRecoverResult {
	out.ReadSwapped = true
	return out
}
