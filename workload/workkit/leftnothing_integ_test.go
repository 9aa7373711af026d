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
