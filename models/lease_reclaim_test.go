package models

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// reclaim is a LeaseReclaim of the test namespace.
func reclaim(generation string) LeaseReclaim {
	return LeaseReclaim{Namespace: ns, Generation: generation}
}

// reclaimWindow is a LeaseReclaim spanning an acquire's [start, end], as a
// real-OS recorder emits it, on a lane of its own.
func reclaimWindow(lane int, start, end int64, generation string) porcupine.Operation {
	return porcupine.Operation{ClientId: lane, Input: reclaim(generation), Call: start, Return: end}
}

func TestLeaseReclaimHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"reclaim of a dead owner, inspect sees the empty instant, then the grant", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			call(2, 4, 20, acq(2, "a", "s2"), acquired("g2", 2, "g1")),
			event(5, reclaim("")),
			call(3, 6, 7, insp(3), empty),
		}, porcupine.Ok},
		{"reclaim naming the dead owner's generation", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			event(4, reclaim("g1")),
			call(2, 5, 6, insp(2), empty),
		}, porcupine.Ok},
		{"real-OS window: the reclaim is placed inside the acquire", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			call(2, 4, 20, acq(2, "a", "s2"), acquired("g2", 2, "g1")),
			reclaimWindow(50, 4, 20, "g1"),
			call(3, 6, 7, insp(3), empty),
			call(3, 21, 22, insp(3), owned("g2", "s2", 2)),
		}, porcupine.Ok},
		{"reclaim of an owner whose acquire was cut short", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), Unknown{}),
			event(3, ProcessDeath{Proc: 1}),
			event(4, reclaim("")),
			call(2, 5, 6, insp(2), empty),
		}, porcupine.Ok},
		{"a reclaim undone by a power loss is redone: a no-op on the empty lease", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			event(4, reclaim("")),
			event(5, reclaim("g1")),
			call(2, 6, 7, acq(2, "a", "s2"), acquired("g2", 2, "g1")),
		}, porcupine.Ok},
		{"reclaim carries away a corrupt record", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			event(4, LeaseCorruption{Namespace: ns}),
			event(5, reclaim("")),
			call(2, 6, 7, insp(2), empty),
		}, porcupine.Ok},
	}, CheckLease)
}

func TestLeaseReclaimBadHistories(t *testing.T) {
	runCases(t, []historyCase{
		{"reclaim of a live owner: two owners", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, reclaim("")),
			call(2, 4, 5, acq(2, "a", "s2"), acquired("g2", 2)),
		}, porcupine.Illegal},
		{"reclaim naming another generation", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			event(3, ProcessDeath{Proc: 1}),
			event(4, reclaim("g9")),
		}, porcupine.Illegal},
		{"the empty instant without a reclaim event while the owner lives", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			call(2, 3, 4, insp(2), empty),
		}, porcupine.Illegal},
		{"real-OS window entirely before the owner died", []porcupine.Operation{
			call(1, 1, 2, acq(1, "a", "s1"), acquired("g1", 1)),
			reclaimWindow(50, 3, 4, "g1"),
			event(5, ProcessDeath{Proc: 1}),
		}, porcupine.Illegal},
	}, CheckLease)
}

func TestValidateLeaseReclaimWindow(t *testing.T) {
	bad := []porcupine.Operation{{ClientId: 50, Input: reclaim("g1"), Call: 5, Return: 4}}
	if err := ValidateLeaseHistory(bad); err == nil {
		t.Fatal("a reclaim window with Return before Call validated")
	}
	good := []porcupine.Operation{{ClientId: 50, Input: reclaim("g1"), Call: 4, Return: 5}}
	if err := ValidateLeaseHistory(good); err != nil {
		t.Fatalf("a reclaim window was refused: %v", err)
	}
}
