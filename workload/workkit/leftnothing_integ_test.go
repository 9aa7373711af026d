package workkit

import (
	"testing"

	"github.com/leasekit/leasekit/sim"
)

// TestFaultedCleanupExcuses pins which injected faults excuse a leftover:
// a failed remove of a sibling stops a cleanup of unique-named machinery
// (admission seed 7812: a dead claimant's data temp, then its orphan), but
// never excuses a fixed-name record or a name in another directory.
func TestFaultedCleanupExcuses(t *testing.T) {
	const orphan = "/d/.active.json.mutation.x.orphan"
	cases := []struct {
		name      string
		op        sim.FaultedOp
		sweepable bool
		want      bool
	}{
		{"sibling remove, machinery", sim.FaultedOp{Kind: "remove", Path: "/d/.tmp-cas-x-1"}, true, true},
		{"sibling remove, owned", sim.FaultedOp{Kind: "remove", Path: "/d/.tmp-cas-x-1"}, false, false},
		{"remove elsewhere", sim.FaultedOp{Kind: "remove", Path: "/e/.tmp-cas-x-1"}, true, false},
		{"sibling write", sim.FaultedOp{Kind: "write", Path: "/d/.tmp-cas-x-1"}, true, false},
		{"remove of the name", sim.FaultedOp{Kind: "remove", Path: orphan}, false, true},
		{"dir fsync, machinery", sim.FaultedOp{Kind: "sync", Path: "/d"}, true, true},
	}
	for _, c := range cases {
		if got := faultedCleanup([]sim.FaultedOp{c.op}, orphan, c.sweepable); got != c.want {
			t.Errorf("%s: faultedCleanup = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLeftNothingJudgesOnlyFaultedFailuresIndeterminate: a product left by
// a failed call is excused only when an injected fault struck the call
// (its outcome is unknown); a refusal that met no fault, and a cancelled
// call, are determinate, and their products are leaks.
func TestLeftNothingJudgesOnlyFaultedFailuresIndeterminate(t *testing.T) {
	fault := []sim.FaultedOp{{Kind: "sync", Path: "/d"}}
	cases := []struct {
		name string
		call leftCall
		want bool
	}{
		{"refused, no fault", leftCall{}, true},
		{"cancelled, no fault", leftCall{ctx: true}, true},
		{"cancelled, with a fault", leftCall{ctx: true, faulted: fault}, true},
		{"failed under an injected fault", leftCall{faulted: fault}, false},
	}
	for _, c := range cases {
		if got := c.call.determinate(); got != c.want {
			t.Errorf("%s: determinate = %v, want %v", c.name, got, c.want)
		}
	}
}
