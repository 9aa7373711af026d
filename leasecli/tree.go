// Package leasecli is the logic leasereal's commands share, on the injected
// environment: it decides, beside the lease engine, whether a lease's
// command still runs after its wrapper died. leasereal records its own
// identity as the lease's owner and leads the process group its command
// and the command's descendants run in; when the wrapper is killed
// (kill -9), those descendants may still work. The engine judges the
// owner by its own process only, so an acquire through leasereal
// (AcquireOnce) asks HeldByTree first, and a lease whose dead wrapper's
// group still has a member (or whose reclaimed owner's group, in
// quarantine/, still has one) is held, not stale; once the engine has
// acquired, AcquiredTreeRuns asks again before the command starts. The
// real OS (lease/osenv.ProcessGroups) and the simulator (simproc.GroupView,
// from Host.Groups) both implement Groups.
//
// The package is deterministic: every effect goes through the engine's
// interfaces and Groups.
package leasecli

import (
	"fmt"

	"github.com/leasekit/leasekit/lease"
)

// Groups reads the caller's PID namespace's process groups.
type Groups interface {
	// GroupRuns reports whether process group pgid has a running member.
	GroupRuns(pgid int) (bool, error)
}

// TreeVerdict is what HolderTreeRuns (and the other judges built on it)
// found.
type TreeVerdict struct {
	// Runs is true when the recorded owner is gone but its process group,
	// which leasereal's command tree runs in, still has a member.
	Runs bool
	// Group is the process group judged (the owner's PID), 0 when none was.
	Group int
	// Why says what was judged, for messages.
	Why string
}

// HolderTreeRuns judges whether the command tree of a lease's owner still
// runs while the owner itself is gone. Only an owner of this host, boot
// and PID namespace can be judged (elsewhere the engine's own rules
// apply). A PID that another process now uses cannot name the owner's
// group any more: Linux hands out no PID that is still a group's number,
// so the owner's group emptied before the PID was reused.
func HolderTreeRuns(owner lease.Owner, self lease.ProcessIdentity, inspector lease.Inspector, groups Groups) (TreeVerdict, error) {
	if owner.Hostname != self.Hostname || owner.PIDNamespace != self.PIDNamespace ||
		owner.BootIdentity != self.BootID || owner.PID <= 0 {
		return TreeVerdict{Why: "owner of another host, boot or PID namespace"}, nil
	}
	seen := inspector.Inspect(owner.PID)
	uninspectable := false
	switch seen.Kind {
	case lease.InspectLive:
		if seen.State != lease.StateZombie {
			return TreeVerdict{Why: "the owner's PID runs: the engine judges it"}, nil
		}
	case lease.InspectAbsent:
	default:
		uninspectable = true
	}
	runs, err := groups.GroupRuns(owner.PID)
	if err != nil {
		return TreeVerdict{}, fmt.Errorf("leasecli: process group %d of the lease's owner: %w", owner.PID, err)
	}
	switch {
	case !runs && uninspectable:
		return TreeVerdict{Group: owner.PID, Why: "the owner's PID cannot be inspected and its process group is empty: the engine judges it"}, nil
	case !runs:
		return TreeVerdict{Group: owner.PID, Why: "the owner and its process group are gone"}, nil
	case uninspectable:
		// The owner (a member of its own group) may be gone and its
		// command's descendants running, or it may run: either way the
		// tree holds the lease. Deferring to the engine here let a run
		// that reclaimed a dead owner start its command beside that
		// owner's descendants when one inspection drew EACCES (lease
		// seed 81010115).
		return TreeVerdict{Runs: true, Group: owner.PID, Why: fmt.Sprintf(
			"the owner (pid %d) cannot be inspected and its process group %d still has a member: it holds the lease", owner.PID, owner.PID)}, nil
	}
	return TreeVerdict{Runs: true, Group: owner.PID,
		Why: fmt.Sprintf("the owner (pid %d) is gone but its process group %d still runs: its command's descendants hold the lease", owner.PID, owner.PID)}, nil
}

// ReclaimedTreeRuns judges the owners an acquire reclaimed: the first
// whose command tree still runs, if any. An acquire that reclaimed such
// an owner holds the lease while that tree runs (the owner died between
// HolderTreeRuns and the engine's judgement), and must not start its own
// command until the tree is gone.
func ReclaimedTreeRuns(result lease.AcquireResult, self lease.ProcessIdentity, inspector lease.Inspector, groups Groups) (TreeVerdict, error) {
	for _, reclaimed := range result.Reclaimed {
		verdict, err := HolderTreeRuns(reclaimed.Owner, self, inspector, groups)
		if err != nil || verdict.Runs {
			return verdict, err
		}
	}
	return TreeVerdict{}, nil
}
