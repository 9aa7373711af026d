package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// aba is p1's claim on /w1 going launching, settled, launching, and a
// co-tenant writing the first launching version back (the A of A-B-A).
func aba() []porcupine.Operation {
	return []porcupine.Operation{
		call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
		call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
		call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirLaunching, DirSettled, 0, 0), dirOK),
		call(1, 7, 8, dirUpdate(1, "/w1", "c1", DirSettled, DirLaunching, 0, 0), dirOK),
		event(9, DirRestore{Path: "/w1", Phase: DirLaunching}),
	}
}

func TestDirLeaseRestore(t *testing.T) {
	release := DirRelease{Proc: 1, Path: "/w1", ClaimID: "c1", Phase: DirLaunching}
	runCases(t, []historyCase{
		{"after an ABA restore the owner's update is refused", with(aba(),
			call(1, 10, 11, dirUpdate(1, "/w1", "c1", DirLaunching, DirSettled, 0, 0), dirChanged),
		), porcupine.Ok},
		{"after an ABA restore the owner's stale update cannot win", with(aba(),
			call(1, 10, 11, dirUpdate(1, "/w1", "c1", DirLaunching, DirSettled, 0, 0), dirOK),
		), porcupine.Illegal},
		{"after an ABA restore the owner's stale release cannot win", with(aba(),
			call(1, 10, 11, release, dirReleased),
		), porcupine.Illegal},
		{"the restored version is what a recovery judges: a restored running child keeps it active", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
			call(1, 7, 8, dirUpdate(1, "/w1", "c1", DirRunning, DirSettled, 10, 0), dirOK),
			event(9, DirRestore{Path: "/w1", Phase: DirRunning, ChildProc: 10, ChildHost: "a", ChildAlive: true}),
			event(10, ProcessDeath{Proc: 1}),
			call(2, 11, 12, recoverAt(2, 0), recovered(0, 0, 1, 0)),
			event(13, ProcessDeath{Proc: 10}),
			call(2, 14, 15, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Ok},
		{"a restored preparing version of a running claim is recoverable once its owner died, its child alive", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
			event(7, DirRestore{Path: "/w1", Phase: DirPreparing}),
			event(8, ProcessDeath{Proc: 1}),
			call(2, 9, 10, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Ok},
		{"without the restore the live child pins it", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
			event(8, ProcessDeath{Proc: 1}),
			call(2, 9, 10, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Illegal},
	}, CheckDirLease)
}
