package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

var (
	quarantine = AdmissionQuarantine{Proc: 9}
	qMoved     = AdmissionQuarantineResult{Moved: true}
	qRefused   = AdmissionQuarantineResult{}
)

// acquiredThenDied is p1 acquiring c1 (rev r1) and dying: its record is
// recoverable, and an operator (p9) may quarantine it.
func acquiredThenDied() []porcupine.Operation {
	return []porcupine.Operation{
		call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
		event(3, ProcessDeath{Proc: 1}),
	}
}

func TestAdmissionOperatorQuarantine(t *testing.T) {
	runCases(t, []historyCase{
		{"a move empties the slot: the next acquire wins", with(acquiredThenDied(),
			call(9, 4, 5, quarantine, qMoved),
			call(2, 6, 7, admAcq(2, "a"), admAcquired("c2", "x1")),
		), porcupine.Ok},
		{"a move of nothing is a finding", []porcupine.Operation{
			call(9, 1, 2, quarantine, qMoved),
		}, porcupine.Illegal},
		{"a moved record's owner loses its next compare-and-swap", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(9, 3, 4, quarantine, qMoved),
			call(1, 5, 6, admRel(1, "r1"), admReleased),
		}, porcupine.Illegal},
		{"a refusal changes nothing: a live owner's record stays active", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(9, 3, 4, quarantine, qRefused),
			call(2, 5, 6, admAcq(2, "a"), admAcquired("c2", "x1")),
		}, porcupine.Illegal},
		{"an unknown outcome may have moved the record", with(acquiredThenDied(),
			call(9, 4, 5, quarantine, Unknown{}),
			call(2, 6, 7, admAcq(2, "a"), admAcquired("c2", "x1")),
		), porcupine.Ok},
		{"an unknown outcome may have moved nothing", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(9, 3, 4, quarantine, Unknown{}),
			call(1, 5, 6, admRel(1, "r1"), admReleased),
		}, porcupine.Ok},
		{"a move of a corrupt record empties the slot", []porcupine.Operation{
			event(1, AdmissionCorruption{}),
			call(9, 2, 3, quarantine, qMoved),
			call(2, 4, 5, admAcq(2, "a"), admAcquired("c2", "x1")),
		}, porcupine.Ok},
		{"a move drops a swapped-out record: the displaced holder's return never comes", with(recordSwapped(),
			event(8, ProcessDeath{Proc: 2}),
			call(9, 9, 10, quarantine, qMoved),
			call(1, 11, 12, trans(1, "h1", PhaseParentOwned, PhaseHelperLaunching, 0), casChanged),
		), porcupine.Ok},
	}, CheckAdmission)
}
