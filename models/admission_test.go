package models

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

func admAcq(proc int, host string) AdmissionAcquire { return AdmissionAcquire{Proc: proc, Host: host} }

func admAcquired(claimID, revision string) AdmissionAcquireResult {
	return AdmissionAcquireResult{Kind: AdmissionAcquired, ClaimID: claimID, Revision: revision}
}

var (
	admActive        = AdmissionAcquireResult{Kind: AdmissionActive}
	admIndeterminate = AdmissionAcquireResult{Kind: AdmissionIndeterminate}
	casChanged       = AdmissionTransitionResult{Kind: CASChanged}
	casInvalid       = AdmissionTransitionResult{Kind: CASInvalid}
	admReleased      = AdmissionReleaseResult{Kind: CASOK}
)

func casOK(revision string) AdmissionTransitionResult {
	return AdmissionTransitionResult{Kind: CASOK, Revision: revision}
}

// trans is a transition by proc of claim c1 from (revision, phase) to next,
// writing helper (0 = none; helpers run on host "a").
func trans(proc int, revision string, from, to AdmissionPhase, helper int) AdmissionTransition {
	t := AdmissionTransition{Proc: proc, ClaimID: "c1", FromRevision: revision, FromPhase: from, ToPhase: to, Helper: helper}
	if helper != 0 {
		t.HelperHost = "a"
	}
	return t
}

func admRel(proc int, revision string) AdmissionRelease {
	return AdmissionRelease{Proc: proc, ClaimID: "c1", Revision: revision, Phase: PhaseParentOwned}
}

// launched is p1 acquiring c1 and running helper p10: r1 → r2 → r3.
func launched() []porcupine.Operation {
	return []porcupine.Operation{
		call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
		call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), casOK("r2")),
		call(1, 5, 6, trans(1, "r2", PhaseHelperLaunching, PhaseHelperActive, 10), casOK("r3")),
	}
}

func with(prefix []porcupine.Operation, rest ...porcupine.Operation) []porcupine.Operation {
	return append(append([]porcupine.Operation(nil), prefix...), rest...)
}

func TestAdmissionGoodHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"full lifecycle", with(launched(),
			call(2, 7, 8, admAcq(2, "a"), admActive),
			call(1, 9, 10, trans(1, "r3", PhaseHelperActive, PhaseParentOwned, 0), casOK("r4")),
			call(1, 11, 12, admRel(1, "r4"), admReleased),
			call(2, 13, 14, admAcq(2, "a"), admAcquired("c2", "r5")),
		), porcupine.Ok},
		{"overlapping acquires: one wins, the other sees it active", []porcupine.Operation{
			call(1, 1, 5, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(2, 2, 6, admAcq(2, "a"), admActive),
		}, porcupine.Ok},
		{"dead parent-owned owner is recoverable", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			event(3, ProcessDeath{Proc: 1}),
			event(4, PIDReuse{Host: "a", PID: 1}),
			call(2, 5, 6, admAcq(2, "a"), admAcquired("c2", "r2")),
		}, porcupine.Ok},
		{"dead parent with a live helper is active, a dead helper indeterminate, a reboot recovers", with(launched(),
			event(7, ProcessDeath{Proc: 1}),
			call(2, 8, 9, admAcq(2, "a"), admActive),
			event(10, ProcessDeath{Proc: 10}),
			call(2, 11, 12, admAcq(2, "a"), admIndeterminate),
			event(13, Reboot{Host: "a"}),
			call(3, 14, 15, admAcq(3, "a"), admAcquired("c3", "r9")),
		), porcupine.Ok},
		{"cleanup-unsafe waits for a reboot", with(launched(),
			call(1, 7, 8, trans(1, "r3", PhaseHelperActive, PhaseCleanupUnsafe, 10), casOK("r4")),
			event(9, ProcessDeath{Proc: 10}),
			event(10, ProcessDeath{Proc: 1}),
			call(2, 11, 12, admAcq(2, "a"), admIndeterminate),
			event(13, Reboot{Host: "a"}),
			call(3, 14, 15, admAcq(3, "a"), admAcquired("c3", "r9")),
		), porcupine.Ok},
		{"an update of unknown outcome that took effect: the retry is refused", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), Unknown{}),
			call(1, 5, 6, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), casChanged),
		}, porcupine.Ok},
		{"an update of unknown outcome that did not take effect: the retry succeeds", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), Unknown{}),
			call(1, 5, 6, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), casOK("r2")),
		}, porcupine.Ok},
		{"a crashed acquire that took effect blocks until its owner's death is seen", []porcupine.Operation{
			call(1, 1, 3, admAcq(1, "a"), Unknown{}),
			call(2, 2, 4, admAcq(2, "a"), admActive),
			event(5, ProcessDeath{Proc: 1}),
			call(2, 6, 7, admAcq(2, "a"), admAcquired("c2", "r2")),
		}, porcupine.Ok},
		{"invalid transitions are refused without effect", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperActive, 10), casInvalid),
			call(1, 5, 6, trans(1, "r1", PhaseParentOwned, PhaseCleanupUnsafe, 0), casInvalid),
			call(1, 7, 8, admRel(1, "r1"), admReleased),
		}, porcupine.Ok},
		{"a remote owner stays active across a reboot of another host", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			event(3, Reboot{Host: "b"}),
			call(2, 4, 5, admAcq(2, "b"), admIndeterminate),
			call(3, 6, 7, admAcq(3, "b"), admActive),
		}, porcupine.Ok},
	}, CheckAdmission)
}

func TestAdmissionBadHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"lost update: a second acquire while the owner lives", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(2, 3, 4, admAcq(2, "a"), admAcquired("c2", "r2")),
		}, porcupine.Illegal},
		{"lost update: a CAS succeeds on a stale revision", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), casOK("r2")),
			call(1, 5, 6, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), casOK("r3")),
		}, porcupine.Illegal},
		{"lost update: the displaced controller's CAS succeeds after a takeover", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			event(3, Reboot{Host: "a"}),
			call(2, 4, 5, admAcq(2, "a"), admAcquired("c2", "r2")),
			call(3, 6, 7, AdmissionRelease{Proc: 3, ClaimID: "c1", Revision: "r1", Phase: PhaseParentOwned}, admReleased),
		}, porcupine.Illegal},
		{"a remote live owner treated as rebooted", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			event(3, Reboot{Host: "b"}),
			call(2, 4, 5, admAcq(2, "b"), admAcquired("c2", "r2")),
		}, porcupine.Illegal},
		{"takeover while a dead parent's helper still runs", with(launched(),
			event(7, ProcessDeath{Proc: 1}),
			call(2, 8, 9, admAcq(2, "a"), admAcquired("c2", "r9")),
		), porcupine.Illegal},
		{"takeover of helper-active with a dead helper before a reboot", with(launched(),
			event(7, ProcessDeath{Proc: 10}),
			event(8, ProcessDeath{Proc: 1}),
			call(2, 9, 10, admAcq(2, "a"), admAcquired("c2", "r9")),
		), porcupine.Illegal},
		{"takeover of cleanup-unsafe before a reboot", with(launched(),
			call(1, 7, 8, trans(1, "r3", PhaseHelperActive, PhaseCleanupUnsafe, 10), casOK("r4")),
			event(9, ProcessDeath{Proc: 10}),
			event(10, ProcessDeath{Proc: 1}),
			call(2, 11, 12, admAcq(2, "a"), admAcquired("c2", "r9")),
		), porcupine.Illegal},
		{"an invalid transition accepted", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperActive, 10), casOK("r2")),
		}, porcupine.Illegal},
		{"a release of an unsettled helper accepted", with(launched(),
			call(1, 7, 8, AdmissionRelease{Proc: 1, ClaimID: "c1", Revision: "r3", Phase: PhaseHelperActive, HasHelper: true}, admReleased),
		), porcupine.Illegal},
		{"a CAS refused as changed although the slot held the caller's revision", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admAcquired("c1", "r1")),
			call(1, 3, 4, trans(1, "r1", PhaseParentOwned, PhaseHelperLaunching, 0), casChanged),
		}, porcupine.Illegal},
		{"active reported for an empty slot", []porcupine.Operation{
			call(1, 1, 2, admAcq(1, "a"), admActive),
		}, porcupine.Illegal},
	}, CheckAdmission)
}

func TestAdmissionTransitionTable(t *testing.T) {
	phases := []AdmissionPhase{PhaseParentOwned, PhaseHelperLaunching, PhaseHelperActive, PhaseCleanupUnsafe}
	// The original implementation's table, as the set of (from, to, helper) triples it allows.
	allowed := map[string]bool{
		"parent-owned>helper-launching/false":   true,
		"helper-launching>helper-active/true":   true,
		"helper-launching>parent-owned/false":   true,
		"helper-active>parent-owned/false":      true,
		"helper-launching>cleanup-unsafe/false": true,
		"helper-active>cleanup-unsafe/false":    true,
		"helper-active>cleanup-unsafe/true":     true,
		"cleanup-unsafe>cleanup-unsafe/false":   true,
	}
	for _, from := range phases {
		for _, to := range phases {
			for _, helper := range []bool{false, true} {
				key := from.String() + ">" + to.String() + "/" + map[bool]string{false: "false", true: "true"}[helper]
				if got := AdmissionTransitionValid(from, to, helper); got != allowed[key] {
					t.Errorf("%s: valid=%t, want %t", key, got, allowed[key])
				}
			}
		}
	}
}

func TestAdmissionDescriptionsEscapeHTML(t *testing.T) {
	text := DescribeAdmissionOperation(AdmissionTransition{Proc: 1, ClaimID: "<c>", FromRevision: "r&"}, casChanged)
	if strings.Contains(text, "<") || !strings.Contains(text, "&lt;c&gt;") || !strings.Contains(text, "r&amp;") {
		t.Fatalf("operation description is not HTML-escaped: %s", text)
	}
	state := DescribeAdmissionState(admissionState{slot: slotClaimed, admissionRecord: admissionRecord{claimID: "<c>", ownerHost: "h"}})
	if strings.Contains(state, "<") {
		t.Fatalf("state description is not HTML-escaped: %s", state)
	}
}
