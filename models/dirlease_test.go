package models

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

func dirCreate(proc int, path string, role DirRole, recoverAfter int64) DirCreate {
	return DirCreate{Proc: proc, Host: "a", Path: path, Role: role, RecoverAfterMs: recoverAfter}
}

func created(claimID string) DirCreateResult { return DirCreateResult{ClaimID: claimID} }

func dirUpdate(proc int, path, claimID string, from, to DirPhase, fromChild, child int) DirUpdate {
	u := DirUpdate{Proc: proc, Path: path, ClaimID: claimID, Role: RoleRawWorking, FromPhase: from, ToPhase: to, FromChild: fromChild, Child: child}
	if child != 0 {
		u.ChildHost = "a"
	}
	return u
}

func recoverAt(proc int, now int64) DirRecover { return DirRecover{Proc: proc, Host: "a", NowMs: now} }

func recovered(recoveredCount, published, active, indeterminate int) DirRecoverResult {
	return DirRecoverResult{Recovered: recoveredCount, Published: published, Active: active, Indeterminate: indeterminate}
}

func use(proc int, path string) DirUse { return DirUse{Proc: proc, Path: path} }

var (
	dirOK       = DirUpdateResult{Kind: CASOK}
	dirChanged  = DirUpdateResult{Kind: CASChanged}
	dirReleased = DirReleaseResult{Kind: CASOK}
	present     = DirUseResult{Kind: UsePresent}
	foreign     = DirUseResult{Kind: UseForeign}
	missing     = DirUseResult{Kind: UseMissing}
	recoverFail = DirRecoverResult{Failed: true}
)

// running is p1 claiming /w1 and running child p10 in it.
func running() []porcupine.Operation {
	return []porcupine.Operation{
		call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
		call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
		call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
	}
}

func TestDirLeaseGoodHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"full lifecycle", with(running(),
			call(1, 7, 8, use(1, "/w1"), present),
			call(2, 9, 10, recoverAt(2, 0), recovered(0, 0, 1, 0)),
			call(1, 11, 12, dirUpdate(1, "/w1", "c1", DirRunning, DirSettled, 10, 0), dirOK),
			call(1, 13, 14, DirRelease{Proc: 1, Path: "/w1", ClaimID: "c1", Phase: DirSettled}, dirReleased),
		), porcupine.Ok},
		{"a dead owner's preparing claim is recovered", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			event(3, ProcessDeath{Proc: 1}),
			event(4, PIDReuse{Host: "a", PID: 1}),
			call(2, 5, 6, recoverAt(2, 0), recovered(1, 0, 0, 0)),
			call(2, 7, 8, recoverAt(2, 0), recovered(0, 0, 0, 0)),
		}, porcupine.Ok},
		{"a live child keeps a dead owner's directory; its death frees it", with(running(),
			event(7, ProcessDeath{Proc: 1}),
			call(2, 8, 9, recoverAt(2, 0), recovered(0, 0, 1, 0)),
			call(10, 10, 11, use(10, "/w1"), present),
			event(12, ProcessDeath{Proc: 10}),
			call(2, 13, 14, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		), porcupine.Ok},
		{"a child that died before it was recorded does not pin the directory", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			event(5, ProcessDeath{Proc: 10}),
			call(1, 6, 7, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
			event(8, ProcessDeath{Proc: 1}),
			call(2, 9, 10, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Ok},
		{"launching waits for recoverAfter", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			event(5, Reboot{Host: "a"}),
			call(2, 6, 7, recoverAt(2, 99), recovered(0, 0, 0, 1)),
			call(2, 8, 9, recoverAt(2, 100), recovered(1, 0, 0, 0)),
		}, porcupine.Ok},
		{"a published bundle stage counts as published", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/s1", RoleBundleStage, 100), created("c1")),
			event(3, DirPublish{Path: "/s1"}),
			event(4, ProcessDeath{Proc: 1}),
			call(2, 5, 6, recoverAt(2, 0), recovered(0, 1, 0, 0)),
		}, porcupine.Ok},
		{"a swapped-in directory fails recovery and survives", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			event(3, ProcessDeath{Proc: 1}),
			event(4, DirSwap{Path: "/w1"}),
			call(2, 5, 6, recoverAt(2, 0), recoverFail),
			call(3, 7, 8, use(3, "/w1"), foreign),
		}, porcupine.Ok},
		{"crashed creations: one took effect, one did not", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), Unknown{}),
			event(3, ProcessDeath{Proc: 1}),
			call(3, 4, 5, dirCreate(3, "/w3", RoleRawWorking, 100), Unknown{}),
			event(6, ProcessDeath{Proc: 3}),
			call(2, 7, 8, recoverAt(2, 0), recovered(1, 0, 0, 0)),
			call(2, 9, 10, recoverAt(2, 0), recovered(0, 0, 0, 0)),
		}, porcupine.Ok},
		{"a crashed recovery removed the directory but not the claim", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			event(3, ProcessDeath{Proc: 1}),
			call(2, 4, 5, recoverAt(2, 0), Unknown{}),
			event(6, ProcessDeath{Proc: 2}),
			call(3, 7, 8, use(3, "/w1"), missing),
			call(3, 9, 10, recoverAt(3, 0), recovered(0, 0, 0, 0)),
		}, porcupine.Ok},
		{"an update of unknown outcome that took effect: the retry is refused", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), Unknown{}),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirChanged),
			call(1, 7, 8, dirUpdate(1, "/w1", "c1", DirLaunching, DirSettled, 0, 0), dirOK),
		}, porcupine.Ok},
		{"an update of unknown outcome that did not take effect: the retry succeeds", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), Unknown{}),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
		}, porcupine.Ok},
		{"a crashed update to launching: recovery may take it once recoverAfter passes", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), Unknown{}),
			event(5, ProcessDeath{Proc: 1}),
			call(2, 6, 7, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Ok},
		{"a child that died while being recorded", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			call(1, 5, 7, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
			event(6, ProcessDeath{Proc: 10}),
			event(8, ProcessDeath{Proc: 1}),
			call(2, 9, 10, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Ok},
		{"a release of unknown outcome, then recovery after the owner dies", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, DirRelease{Proc: 1, Path: "/w1", ClaimID: "c1", Phase: DirPreparing}, Unknown{}),
			event(5, ProcessDeath{Proc: 1}),
			call(2, 6, 7, recoverAt(2, 0), recovered(0, 0, 0, 0)),
		}, porcupine.Ok},
		{"a release of unknown outcome, then a publication the next pass counts", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/s1", RoleBundleStage, 100), created("c1")),
			call(1, 3, 4, DirRelease{Proc: 1, Path: "/s1", ClaimID: "c1", Phase: DirPreparing}, Unknown{}),
			event(5, ProcessDeath{Proc: 1}),
			event(6, DirPublish{Path: "/s1"}),
			call(2, 7, 8, recoverAt(2, 0), recovered(0, 1, 0, 0)),
		}, porcupine.Ok},
		{"recovery concurrent with a release", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(4, 3, 4, dirCreate(4, "/w4", RoleRawWorking, 100), created("c4")),
			event(5, ProcessDeath{Proc: 4}),
			call(2, 6, 10, recoverAt(2, 0), recovered(1, 0, 1, 0)),
			call(1, 7, 8, DirRelease{Proc: 1, Path: "/w1", ClaimID: "c1", Phase: DirPreparing}, dirReleased),
		}, porcupine.Ok},
	}, CheckDirLease)
}

func TestDirLeaseBadHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"a live directory removed: the owner is alive", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(2, 3, 4, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Illegal},
		{"a live directory removed, hidden in the counts, seen by its owner", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(3, 3, 4, dirCreate(3, "/w3", RoleRawWorking, 100), created("c3")),
			event(5, ProcessDeath{Proc: 3}),
			call(2, 6, 7, recoverAt(2, 0), recovered(1, 0, 0, 0)),
			call(1, 8, 9, use(1, "/w1"), missing),
		}, porcupine.Illegal},
		{"a live directory removed, seen by the owner's next update", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(3, 3, 4, dirCreate(3, "/w3", RoleRawWorking, 100), created("c3")),
			event(5, ProcessDeath{Proc: 3}),
			call(2, 6, 7, recoverAt(2, 0), recovered(1, 0, 0, 0)),
			call(1, 8, 9, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirChanged),
		}, porcupine.Illegal},
		{"a live child's directory removed", with(running(),
			event(7, ProcessDeath{Proc: 1}),
			call(2, 8, 9, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		), porcupine.Illegal},
		{"a launching directory removed before recoverAfter", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			event(5, ProcessDeath{Proc: 1}),
			call(2, 6, 7, recoverAt(2, 99), recovered(1, 0, 0, 0)),
		}, porcupine.Illegal},
		{"a directory of another identity removed", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			event(3, ProcessDeath{Proc: 1}),
			event(4, DirSwap{Path: "/w1"}),
			call(2, 5, 6, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Illegal},
		{"a directory of another identity removed by a failing pass", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			event(3, ProcessDeath{Proc: 1}),
			event(4, DirSwap{Path: "/w1"}),
			call(2, 5, 6, recoverAt(2, 0), recoverFail),
			call(3, 7, 8, use(3, "/w1"), missing),
		}, porcupine.Illegal},
		{"an invalid transition accepted", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirRunning, 0, 10), dirOK),
		}, porcupine.Illegal},
		{"an update refused as changed on an intact claim", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirChanged),
		}, porcupine.Illegal},
		{"a stale update accepted after its retry was refused", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), Unknown{}),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirChanged),
			call(1, 7, 8, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
		}, porcupine.Illegal},
		{"a live child's directory removed after an update of unknown outcome failed to record it", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/w1", RoleRawWorking, 100), created("c1")),
			call(1, 3, 4, dirUpdate(1, "/w1", "c1", DirPreparing, DirLaunching, 0, 0), dirOK),
			call(1, 5, 6, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 10), dirOK),
			call(1, 7, 8, dirUpdate(1, "/w1", "c1", DirRunning, DirSettled, 10, 0), Unknown{}),
			call(1, 9, 10, dirUpdate(1, "/w1", "c1", DirRunning, DirSettled, 10, 0), dirOK),
			call(1, 11, 12, dirUpdate(1, "/w1", "c1", DirSettled, DirLaunching, 0, 0), dirOK),
			call(1, 13, 14, dirUpdate(1, "/w1", "c1", DirLaunching, DirRunning, 0, 11), dirOK),
			event(15, ProcessDeath{Proc: 1}),
			call(2, 16, 17, recoverAt(2, 0), recovered(1, 0, 0, 0)),
		}, porcupine.Illegal},
		{"a present directory counted as published", []porcupine.Operation{
			call(1, 1, 2, dirCreate(1, "/s1", RoleBundleStage, 100), created("c1")),
			event(3, ProcessDeath{Proc: 1}),
			call(2, 4, 5, recoverAt(2, 0), recovered(0, 1, 0, 0)),
		}, porcupine.Illegal},
	}, CheckDirLease)
}

func TestDirTransitionTable(t *testing.T) {
	phases := []DirPhase{DirPreparing, DirLaunching, DirRunning, DirSettled}
	allowed := map[[2]DirPhase]bool{
		{DirPreparing, DirLaunching}: true,
		{DirSettled, DirLaunching}:   true,
		{DirLaunching, DirRunning}:   true,
		{DirLaunching, DirSettled}:   true,
		{DirRunning, DirSettled}:     true,
	}
	for _, from := range phases {
		for _, to := range phases {
			for _, child := range []bool{false, true} {
				want := allowed[[2]DirPhase{from, to}] && child == (to == DirRunning)
				if got := DirTransitionValid(RoleRawWorking, from, to, child); got != want {
					t.Errorf("%s -> %s child %t: valid=%t, want %t", from, to, child, got, want)
				}
				if DirTransitionValid(RoleBundleStage, from, to, child) {
					t.Errorf("bundle stage %s -> %s: valid, want invalid", from, to)
				}
			}
		}
	}
}

func TestDirLeaseDescriptionsEscapeHTML(t *testing.T) {
	text := DescribeDirLeaseOperation(use(1, "/w<1>"), missing)
	if strings.Contains(text, "<") || !strings.Contains(text, "/w&lt;1&gt;") {
		t.Fatalf("operation description is not HTML-escaped: %s", text)
	}
	state := DescribeDirLeaseState(encodeDirWorld(dirWorld{}.with(dirClaim{path: "/a&b", role: RoleRawWorking, contents: []dirContent{{phase: DirPreparing}}})))
	if !strings.Contains(state, "/a&amp;b") {
		t.Fatalf("state description is not HTML-escaped: %s", state)
	}
}
