package models

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

const ns = "ns"

func acq(proc int, host, session string) LeaseAcquire {
	return LeaseAcquire{Namespace: ns, Proc: proc, Host: host, Session: session}
}

func acquired(generation string, epoch int64, reclaimed ...string) LeaseAcquireResult {
	return LeaseAcquireResult{Kind: LeaseAcquired, Generation: generation, Epoch: epoch, Reclaimed: reclaimed}
}

func held(generation, session string, epoch int64) LeaseAcquireResult {
	return LeaseAcquireResult{Kind: LeaseHeld, Generation: generation, Session: session, Epoch: epoch}
}

func acquireRefused(reason RefusalReason) LeaseAcquireResult {
	return LeaseAcquireResult{Kind: LeaseAcquireRefused, Reason: reason}
}

func rel(proc int, generation, session string) LeaseRelease {
	return LeaseRelease{Namespace: ns, Proc: proc, Generation: generation, Session: session}
}

var (
	released = LeaseReleaseResult{Kind: LeaseReleased}
	notOwner = LeaseReleaseResult{Kind: LeaseNotOwner}
	empty    = LeaseInspectResult{Kind: LeaseEmpty}
	fenceOK  = LeaseFenceResult{Kind: FenceOK}
	fenced   = LeaseFenceResult{Kind: FenceFenced}
)

func insp(proc int) LeaseInspect { return LeaseInspect{Namespace: ns, Proc: proc} }

func owned(generation, session string, epoch int64) LeaseInspectResult {
	return LeaseInspectResult{Kind: LeaseOwned, Generation: generation, Session: session, Epoch: epoch}
}

func fence(proc int, generation, session string) LeaseWithCurrent {
	return LeaseWithCurrent{Namespace: ns, Proc: proc, Generation: generation, Session: session}
}

func TestLeaseGoodHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"sequential lifecycle", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(1, 3, 4, insp(1), owned("g1", "s1", 1)),
			call(1, 5, 6, fence(1, "g1", "s1"), fenceOK),
			call(1, 7, 8, rel(1, "g1", "s1"), released),
			call(1, 9, 10, insp(1), empty),
			call(1, 11, 12, rel(1, "g1", "s1"), notOwner),
			call(1, 13, 14, fence(1, "g1", "s1"), fenced),
		}, porcupine.Ok},
		{"overlapping acquires, one wins, the other sees it held", []porcupine.Operation{
			call(1, 1, 6, acq(1, "a", "s1"), held("g2", "s2", 1)),
			call(2, 2, 4, acq(2, "a", "s2"), acquired("g2", 1)),
			call(3, 3, 8, insp(3), owned("g2", "s2", 1)),
		}, porcupine.Ok},
		{"crashed acquire that took effect is bound by a later inspect", []porcupine.Operation{
			call(1, 1, 3, acq(1, "a", "s1"), Unknown{}),
			event(4, ProcessDeath{Proc: 1}),
			call(2, 5, 6, insp(2), owned("g1", "s1", 7)),
			call(2, 7, 8, acq(2, "a", "s2"), acquired("g2", 8, "g1")),
			call(2, 9, 10, fence(2, "g2", "s2"), fenceOK),
		}, porcupine.Ok},
		{"crashed acquire that did not take effect", []porcupine.Operation{
			call(1, 1, 3, acq(1, "a", "s1"), Unknown{}),
			event(4, ProcessDeath{Proc: 1}),
			call(2, 5, 6, insp(2), empty),
			call(2, 7, 8, acq(2, "a", "s2"), acquired("g2", 1)),
		}, porcupine.Ok},
		{"crashed acquire that reclaimed a dead owner then died before installing", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			call(2, 4, 5, acq(2, "a", "s2"), Unknown{}),
			event(6, ProcessDeath{Proc: 2}),
			call(3, 7, 8, insp(3), empty),
		}, porcupine.Ok},
		{"reboot kills the owner, a new incarnation on the same host reclaims", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, acq(2, "b", "s2"), acquireRefused(RefusalRemoteOwner)),
			event(5, Reboot{Host: "a"}),
			call(3, 6, 7, acq(3, "a", "s3"), acquired("g3", 2, "g1")),
		}, porcupine.Ok},
		{"PID reuse changes nothing: the dead owner stays reclaimable", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			event(4, PIDReuse{Host: "a", PID: 100}),
			call(2, 5, 6, acq(2, "a", "s2"), acquired("g2", 2, "g1")),
		}, porcupine.Ok},
		{"release is a capability: another process presenting the generation releases", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, insp(2), owned("g1", "s1", 1)),
			call(2, 5, 6, rel(2, "g1", "s1"), released),
			call(1, 7, 8, fence(1, "g1", "s1"), fenced),
		}, porcupine.Ok},
		{"crashed release that took effect, then one that did not", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(1, 3, 4, rel(1, "g1", "s1"), Unknown{}),
			event(5, ProcessDeath{Proc: 1}),
			call(2, 6, 7, insp(2), empty),
			call(2, 8, 9, acq(2, "a", "s2"), acquired("g2", 2)),
			call(2, 10, 11, rel(2, "g2", "s2"), Unknown{}),
			event(12, ProcessDeath{Proc: 2}),
			call(3, 13, 14, insp(3), owned("g2", "s2", 2)),
		}, porcupine.Ok},
		{"corruption refuses, an operator clear lets a higher epoch in", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 4)),
			event(3, LeaseCorruption{Namespace: ns}),
			call(2, 4, 5, acq(2, "a", "s2"), acquireRefused(RefusalCorruptOwner)),
			call(1, 6, 7, fence(1, "g1", "s1"), fenced),
			call(1, 8, 9, rel(1, "g1", "s1"), LeaseReleaseResult{Kind: LeaseReleaseRefused, Reason: RefusalCorruptOwner}),
			event(10, LeaseClear{Namespace: ns}),
			call(2, 11, 12, acq(2, "a", "s3"), acquired("g3", 5)),
		}, porcupine.Ok},
		{"a corrupt epoch file refuses until repaired", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 3)),
			call(1, 3, 4, rel(1, "g1", "s1"), released),
			event(5, LeaseEpochCorruption{Namespace: ns}),
			call(2, 6, 7, acq(2, "a", "s2"), acquireRefused(RefusalCorruptEpoch)),
			event(8, LeaseEpochRepair{Namespace: ns}),
			call(2, 9, 10, acq(2, "a", "s3"), acquired("g3", 4)),
		}, porcupine.Ok},
		{"guard refusals are legal anywhere", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquireRefused(RefusalLifecycleBusy)),
			call(1, 3, 4, acq(1, "a", "s2"), acquired("g2", 1)),
			call(2, 5, 6, acq(2, "a", "s3"), acquireRefused(RefusalLifecycleUnverifiable)),
			call(2, 7, 8, acq(2, "a", "s4"), acquireRefused(RefusalUnverifiableOwner)),
			call(1, 9, 10, fence(1, "g2", "s2"), LeaseFenceResult{Kind: FenceBusy}),
		}, porcupine.Ok},
		{"two namespaces partition independently", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, LeaseAcquire{Namespace: "other", Proc: 2, Host: "a", Session: "s2"}, acquired("g2", 1)),
		}, porcupine.Ok},
	}, CheckLease)
}

func TestLeaseBadHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"two owners: a live owner reclaimed", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, acq(2, "a", "s2"), acquired("g2", 2, "g1")),
			call(1, 5, 6, fence(1, "g1", "s1"), fenceOK),
		}, porcupine.Illegal},
		{"two owners: a crashed acquire's grant seen, then a second grant while it lives", []porcupine.Operation{
			call(1, 1, 3, acq(1, "a", "s1"), Unknown{}),
			call(2, 4, 5, insp(2), owned("g1", "s1", 1)),
			call(2, 6, 7, acq(2, "a", "s2"), acquired("g2", 2)),
			event(8, ProcessDeath{Proc: 1}),
		}, porcupine.Illegal},
		{"release by a non-owner accepted: a stale generation", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(1, 3, 4, rel(1, "g1", "s1"), released),
			call(2, 5, 6, acq(2, "a", "s2"), acquired("g2", 2)),
			call(1, 7, 8, rel(1, "g1", "s1"), released),
		}, porcupine.Illegal},
		{"release by a non-owner accepted: owner bound late", []porcupine.Operation{
			call(1, 1, 3, acq(1, "a", "s1"), Unknown{}),
			call(2, 4, 5, rel(2, "g2", "s2"), released),
		}, porcupine.Illegal},
		{"fenced op allowed after the lease moved on", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, rel(2, "g1", "s1"), released),
			call(2, 5, 6, acq(2, "a", "s2"), acquired("g2", 2)),
			call(1, 7, 8, fence(1, "g1", "s1"), fenceOK),
		}, porcupine.Illegal},
		{"fenced op allowed after a reboot reclaim", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, Reboot{Host: "a"}),
			call(3, 4, 5, acq(3, "a", "s3"), acquired("g3", 2, "g1")),
			call(4, 6, 7, fence(4, "g1", "s1"), fenceOK),
		}, porcupine.Illegal},
		{"fenced op allowed for another process holding the generation", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, fence(2, "g1", "s1"), fenceOK),
		}, porcupine.Illegal},
		{"epochs not strictly increasing: equal", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 3)),
			call(1, 3, 4, rel(1, "g1", "s1"), released),
			call(2, 5, 6, acq(2, "a", "s2"), acquired("g2", 3)),
		}, porcupine.Illegal},
		{"epochs not strictly increasing: after a crashed grant observed", []porcupine.Operation{
			call(1, 1, 3, acq(1, "a", "s1"), Unknown{}),
			event(4, ProcessDeath{Proc: 1}),
			call(2, 5, 6, insp(2), owned("g1", "s1", 5)),
			call(2, 7, 8, acq(2, "a", "s2"), acquired("g2", 5, "g1")),
		}, porcupine.Illegal},
		{"epochs not strictly increasing: across corruption and clear", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 4)),
			event(3, LeaseCorruption{Namespace: ns}),
			event(4, LeaseClear{Namespace: ns}),
			call(2, 5, 6, acq(2, "a", "s2"), acquired("g2", 2)),
		}, porcupine.Illegal},
		{"held reported for a dead owner (PID reuse mistaken for life)", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			event(4, PIDReuse{Host: "a", PID: 100}),
			call(2, 5, 6, acq(2, "a", "s2"), held("g1", "s1", 1)),
		}, porcupine.Illegal},
		{"a corrupt owner acquired over", []porcupine.Operation{
			event(1, LeaseCorruption{Namespace: ns}),
			call(1, 2, 3, acq(1, "a", "s1"), acquired("g1", 1)),
		}, porcupine.Illegal},
		{"inspect reports another generation for a bound owner", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, insp(2), owned("gX", "s1", 1)),
		}, porcupine.Illegal},
		{"corrupt-epoch refusal with a sound epoch file", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquireRefused(RefusalCorruptEpoch)),
		}, porcupine.Illegal},
		{"remote-owner refusal from the owner's own host", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, acq(2, "a", "s2"), acquireRefused(RefusalRemoteOwner)),
		}, porcupine.Illegal},
		{"the partition with the violation fails the whole history", []porcupine.Operation{
			call(1, 1, 2, LeaseAcquire{Namespace: "other", Proc: 1, Host: "a", Session: "s0"}, acquired("g0", 1)),
			call(1, 3, 4, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 5, 6, acq(2, "a", "s2"), acquired("g2", 2)),
		}, porcupine.Illegal},
	}, CheckLease)
}

func TestValidateLeaseHistory(t *testing.T) {
	cases := []struct {
		name string
		ops  []porcupine.Operation
		want string
	}{
		{"return before call", []porcupine.Operation{call(1, 5, 4, insp(1), empty)}, "not after Call"},
		{"nil output", []porcupine.Operation{call(1, 1, 2, insp(1), nil)}, "Output is nil"},
		{"lane shared by two incarnations", []porcupine.Operation{
			call(1, 1, 2, insp(1), empty), call(1, 3, 4, insp(2), empty)}, "lane 1 holds"},
		{"overlapping ops on one lane", []porcupine.Operation{
			call(1, 1, 4, insp(1), empty), call(1, 3, 5, insp(1), empty)}, "not sequential"},
		{"op open at its process's death", []porcupine.Operation{
			call(1, 1, 4, acq(1, "a", "s1"), Unknown{}), event(4, ProcessDeath{Proc: 1})}, "not before its death"},
		{"op after a reboot of its host", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)), event(3, Reboot{Host: "a"}),
			call(1, 4, 5, insp(1), empty)}, "reboot"},
		{"environment event with a duration", []porcupine.Operation{
			{ClientId: envLane, Input: ProcessDeath{Proc: 1}, Call: 1, Return: 2}}, "Call == Return"},
		{"foreign input type", []porcupine.Operation{call(1, 1, 2, struct{ Proc int }{1}, Unknown{})}, "does not belong"},
		{"output of another operation", []porcupine.Operation{call(1, 1, 2, insp(1), fenceOK)}, "want models.LeaseInspectResult"},
		{"environment event with an output", []porcupine.Operation{
			{ClientId: envLane, Input: ProcessDeath{Proc: 1}, Output: Unknown{}, Call: 1, Return: 1}}, "want nil"},
		{"release without a generation", []porcupine.Operation{call(1, 1, 2, rel(1, "", "s1"), notOwner)}, "does not belong"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateLeaseHistory(tc.ops)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	good := []porcupine.Operation{
		call(1, 1, 3, acq(1, "a", "s1"), Unknown{}), event(4, ProcessDeath{Proc: 1}),
		call(2, 5, 6, insp(2), empty),
	}
	if err := ValidateLeaseHistory(good); err != nil {
		t.Fatalf("a valid history was rejected: %v", err)
	}
}

func TestLeaseTimeoutIsUnknown(t *testing.T) {
	ops := generateLeaseHistory(leaseWorkload{seed: 7, clients: 40, ops: 3000, crashPercent: 1})
	got, _ := CheckLease(ops, time.Microsecond)
	if got != porcupine.Unknown {
		t.Fatalf("a 1µs check of %d ops gave %s, want Unknown", len(ops), got)
	}
}

func TestLeaseVisualizationEscapesHTML(t *testing.T) {
	ops := []porcupine.Operation{
		call(1, 1, 2, LeaseAcquire{Namespace: "<ns>", Proc: 1, Host: "a", Session: "<script>"}, acquired("g1", 1)),
		call(2, 3, 4, LeaseAcquire{Namespace: "<ns>", Proc: 2, Host: "a", Session: "s2"}, acquired("g2", 2)),
	}
	result, info := CheckLease(ops, checkTimeout)
	if result != porcupine.Illegal {
		t.Fatalf("verdict %s, want Illegal", result)
	}
	var page bytes.Buffer
	if err := porcupine.Visualize(LeaseModel(), info, &page); err != nil {
		t.Fatal(err)
	}
	if page.Len() == 0 {
		t.Fatal("Visualize wrote nothing")
	}
	description := DescribeLeaseOperation(ops[0].Input, ops[0].Output)
	if strings.Contains(description, "<") || !strings.Contains(description, "session &lt;script&gt;") {
		t.Fatalf("operation description is not HTML-escaped: %s", description)
	}
	state := DescribeLeaseState(leaseState{kind: leaseStateOwned, ownerSession: "<b>", ownerHost: "h&"})
	if strings.Contains(state, "<") || !strings.Contains(state, "&lt;b&gt;") || !strings.Contains(state, "h&amp;") {
		t.Fatalf("state description is not HTML-escaped: %s", state)
	}
}

// TestLeaseVisualizationWithSharedEnvironmentEvents renders a failing
// history whose environment events are copied into two partitions.
func TestLeaseVisualizationWithSharedEnvironmentEvents(t *testing.T) {
	ops := []porcupine.Operation{
		call(1, 1, 2, LeaseAcquire{Namespace: "other", Proc: 1, Host: "a", Session: "s0"}, acquired("g0", 1)),
		call(1, 3, 4, acq(1, "a", "s1"), acquired("g1", 1)),
		event(5, PIDReuse{Host: "a", PID: 7}),
		call(2, 6, 7, acq(2, "a", "s2"), acquired("g2", 2)),
	}
	result, info := CheckLease(ops, checkTimeout)
	if result != porcupine.Illegal {
		t.Fatalf("verdict %s, want Illegal", result)
	}
	var page bytes.Buffer
	if err := porcupine.Visualize(LeaseModel(), info, &page); err != nil {
		t.Fatal(err)
	}
	text := ExplainIllegal(LeaseModel(), ops, info)
	if !strings.Contains(text, "partition 0 (3 operations)") || strings.Contains(text, "partition 1") {
		t.Fatalf("explanation should name only the failing partition (ns sorts before other):\n%s", text)
	}
}
