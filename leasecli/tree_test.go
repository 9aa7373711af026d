package leasecli_test

import (
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/leasecli"
)

// groupsOf answers GroupRuns from a fixed set of running groups.
type groupsOf map[int]bool

func (g groupsOf) GroupRuns(pgid int) (bool, error) { return g[pgid], nil }

// TestHolderTreeRunsJudgesEveryInspection: the verdict for each answer an
// inspection of the owner's PID can give, with its process group running
// or empty. An owner that cannot be inspected (EACCES on /proc) whose
// group still has a member holds the lease: before, that case deferred to
// the engine, and a run that had reclaimed the dead owner started its
// command beside the owner's descendants (lease seed 81010115).
func TestHolderTreeRunsJudgesEveryInspection(t *testing.T) {
	self := leasetest.IdentityOf(3, 1000, "30")
	ownerIdentity := leasetest.IdentityOf(7, 1000, "70")
	owner := lease.Owner{PID: 7, Hostname: self.Hostname, PIDNamespace: self.PIDNamespace, BootIdentity: self.BootID}
	cases := []struct {
		name      string
		inspected func(*leasetest.Inspector)
		groupRuns bool
		wantRuns  bool
	}{
		{"owner runs", func(i *leasetest.Inspector) { i.SetLive(ownerIdentity) }, true, false},
		{"owner gone, group runs", func(i *leasetest.Inspector) {}, true, true},
		{"owner gone, group empty", func(i *leasetest.Inspector) {}, false, false},
		{"owner uninspectable, group runs", func(i *leasetest.Inspector) { i.Set(7, leasetest.Unknown("permission denied")) }, true, true},
		{"owner uninspectable, group empty", func(i *leasetest.Inspector) { i.Set(7, leasetest.Unknown("permission denied")) }, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inspector := leasetest.NewInspector(self)
			tc.inspected(inspector)
			verdict, err := leasecli.HolderTreeRuns(owner, self, inspector, groupsOf{7: tc.groupRuns})
			require.NoError(t, err)
			require.Equal(t, tc.wantRuns, verdict.Runs, verdict.Why)
		})
	}
}
