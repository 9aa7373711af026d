package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

func TestAdmissionLegacyHistories(t *testing.T) {
	acquire := AdmissionAcquire{Proc: 1, Host: "h"}
	got := AdmissionAcquireResult{Kind: AdmissionAcquired, ClaimID: "c1", Revision: "r1"}
	indeterminate := AdmissionAcquireResult{Kind: AdmissionIndeterminate}
	runCases(t, []historyCase{
		{"schema 1 refuses until its host reboots, then is recovered", []porcupine.Operation{
			event(1, AdmissionLegacy{Host: "h", Phase: PhaseCleanupUnsafe}),
			call(1, 2, 3, acquire, indeterminate),
			event(4, Reboot{Host: "h"}),
			call(2, 5, 6, AdmissionAcquire{Proc: 2, Host: "h"}, got),
		}, porcupine.Ok},
		{"schema 2 parent-owned is recoverable at once", []porcupine.Operation{
			event(1, AdmissionLegacy{Host: "h", Phase: PhaseParentOwned}),
			call(1, 2, 3, acquire, got),
		}, porcupine.Ok},
	}, CheckAdmission)
	runCases(t, []historyCase{
		{"schema 1 taken over without a reboot", []porcupine.Operation{
			event(1, AdmissionLegacy{Host: "h", Phase: PhaseCleanupUnsafe}),
			call(1, 2, 3, acquire, got),
		}, porcupine.Illegal},
		{"a legacy record cannot be released by a compare-and-swap", []porcupine.Operation{
			event(1, AdmissionLegacy{Host: "h", Phase: PhaseParentOwned}),
			call(1, 2, 3, AdmissionRelease{Proc: 1, ClaimID: "c0", Revision: "r0", Phase: PhaseParentOwned},
				AdmissionReleaseResult{Kind: CASOK}),
		}, porcupine.Illegal},
	}, CheckAdmission)
}
