package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// recordSwapped is p2 acquiring c2 (rev o1) and releasing it, p1 acquiring
// c1 (rev h1), and the co-tenant renaming a copy of p2's record over p1's.
func recordSwapped() []porcupine.Operation {
	o1 := AdmissionRelease{Proc: 2, ClaimID: "c2", Revision: "o1", Phase: PhaseParentOwned}
	return []porcupine.Operation{
		call(2, 1, 2, admAcq(2, "a"), admAcquired("c2", "o1")),
		call(2, 3, 4, o1, admReleased),
		call(1, 5, 6, admAcq(1, "a"), admAcquired("c1", "h1")),
		event(7, AdmissionSwap{ClaimID: "c2", Revision: "o1", Phase: PhaseParentOwned, OwnerProc: 2, OwnerHost: "a"}),
	}
}

func TestAdmissionRecordSwappedIn(t *testing.T) {
	staleO := AdmissionTransition{Proc: 2, ClaimID: "c2", FromRevision: "o1", FromPhase: PhaseParentOwned,
		ToPhase: PhaseHelperLaunching}
	begin := trans(1, "h1", PhaseParentOwned, PhaseHelperLaunching, 0)
	runCases(t, []historyCase{
		{"the displaced holder's update is refused", with(recordSwapped(),
			call(1, 8, 9, begin, casChanged),
		), porcupine.Ok},
		{"the displaced holder's update cannot win", with(recordSwapped(),
			call(1, 8, 9, begin, casOK("h2")),
		), porcupine.Illegal},
		{"the displaced holder's release cannot win", with(recordSwapped(),
			call(1, 8, 9, admRel(1, "h1"), admReleased),
		), porcupine.Illegal},
		{"an acquire sees the swapped-in record's live owner", with(recordSwapped(),
			call(3, 8, 9, admAcq(3, "a"), admActive),
		), porcupine.Ok},
		{"an acquire over the swapped-in record's live owner is a finding", with(recordSwapped(),
			call(3, 8, 9, admAcq(3, "a"), admAcquired("c3", "x1")),
		), porcupine.Illegal},
		{"the swapped-in owner's handle of exactly that revision matches (the engine's revision rule)", with(recordSwapped(),
			call(2, 8, 9, staleO, casOK("o2")),
		), porcupine.Ok},
		{"the swapped-in owner's handle of exactly that revision cannot be refused", with(recordSwapped(),
			call(2, 8, 9, staleO, casChanged),
		), porcupine.Illegal},
		{"after the operator's return the displaced holder wins again", with(recordSwapped(),
			call(1, 8, 9, begin, casChanged),
			event(10, AdmissionReturn{}),
			call(1, 11, 12, begin, casOK("h2")),
		), porcupine.Ok},
		{"after the return the swapped-in owner's handle loses", with(recordSwapped(),
			event(8, AdmissionReturn{}),
			call(2, 9, 10, staleO, casOK("o2")),
		), porcupine.Illegal},
		{"the displaced holder's death while swapped out is kept: its returned record is recoverable", with(recordSwapped(),
			event(8, ProcessDeath{Proc: 1}),
			event(9, AdmissionReturn{}),
			call(3, 10, 11, admAcq(3, "a"), admAcquired("c3", "x1")),
		), porcupine.Ok},
		{"the returned record of a live holder is active", with(recordSwapped(),
			event(8, ProcessDeath{Proc: 2}),
			event(9, AdmissionReturn{}),
			call(3, 10, 11, admAcq(3, "a"), admAcquired("c3", "x1")),
		), porcupine.Illegal},
	}, CheckAdmission)
}
