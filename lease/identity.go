package lease

import (
	"fmt"

	"github.com/leasekit/leasekit/env"
)

// The process-table types are declared in package env and re-exported here
// under the same names; the aliases are identical types.
type (
	// ProcessIdentity names one process incarnation; see env.ProcessIdentity.
	ProcessIdentity = env.ProcessIdentity
	// ProcessState is the scheduler state of a live process; see env.ProcessState.
	ProcessState = env.ProcessState
	// InspectionKind is the outcome class of Inspector.Inspect; see env.InspectionKind.
	InspectionKind = env.InspectionKind
	// Inspection is what Inspector.Inspect learned about one PID; see env.Inspection.
	Inspection = env.Inspection
	// Inspector reads the process table; see env.Inspector.
	Inspector = env.Inspector
)

// The process states and inspection kinds; see env.StateRunning and the others.
const (
	StateRunning   = env.StateRunning
	StateZombie    = env.StateZombie
	InspectLive    = env.InspectLive
	InspectAbsent  = env.InspectAbsent
	InspectUnknown = env.InspectUnknown
)

// isDecimal reports whether s is a decimal tick count (as
// env.ProcessIdentity.Validate checks a start time).
func isDecimal(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// OwnerKind classifies a recorded owner against the live process table.
type OwnerKind int

const (
	// OwnerLive: the recorded process is still running.
	OwnerLive OwnerKind = iota + 1
	// OwnerStale: the recorded process is provably gone; Reason says how.
	OwnerStale
	// OwnerRemote: the record was written on another host; it cannot be
	// inspected from here and must never be reclaimed from here.
	OwnerRemote
	// OwnerUnknown: liveness cannot be decided (inspection failed, another
	// PID namespace, another user's process); refuse, never reclaim.
	OwnerUnknown
)

func (k OwnerKind) String() string {
	switch k {
	case OwnerLive:
		return "live"
	case OwnerStale:
		return "stale"
	case OwnerRemote:
		return "remote"
	case OwnerUnknown:
		return "unknown"
	}
	return fmt.Sprintf("OwnerKind(%d)", int(k))
}

// OwnerState is the verdict of ClassifyRecord.
type OwnerState struct {
	Kind OwnerKind
	// Reason says why the owner is stale, or why it cannot be decided.
	Reason string
}

// Stale reasons. They are part of the API: reclaim reports carry them.
const (
	StaleBootChanged       = "host boot identity changed"
	StalePIDAbsent         = "PID is absent"
	StaleZombie            = "PID is a single-threaded zombie"
	StaleStartChanged      = "PID start identity changed"
	StaleExecutableChanged = "PID executable changed"
)

// ClassifyRecord decides whether the process recorded in rec (an owner, a
// guard or an intent) is still the one running. current is the caller's own
// identity. The rules, in order (docs/FORMAT-lease.md, "Identity rules"):
//
//  1. another hostname: remote (a shared filesystem; never reclaim);
//  2. another PID namespace, or a namespace that cannot be compared: unknown;
//  3. another boot id than the caller's (both known): stale, the whole
//     process table is new;
//  4. inspect(pid): absent is stale, unknown (EACCES, EPERM, ...) is unknown;
//     a live process whose boot id differs from the record's (both known) is
//     stale, even when the caller's own boot id is unreadable;
//  5. a zombie with one thread is stale; a zombie leader with live threads is
//     alive and goes on to the identity comparison;
//  6. another start time: stale (PID reuse);
//  7. another executable inode (dev+ino): stale. A path comparison would call
//     an upgraded but still running owner stale.
//  8. otherwise live.
func ClassifyRecord(rec, current ProcessIdentity, inspector Inspector) OwnerState {
	if rec.Hostname != current.Hostname {
		return OwnerState{Kind: OwnerRemote, Reason: fmt.Sprintf("owner is on remote host %q", rec.Hostname)}
	}
	if rec.PIDNamespace != current.PIDNamespace {
		return OwnerState{Kind: OwnerUnknown, Reason: fmt.Sprintf(
			"owner PID %d is in PID namespace %q, this process is in %q", rec.PID, rec.PIDNamespace, current.PIDNamespace)}
	}
	if bootsDiffer(rec.BootID, current.BootID) {
		return OwnerState{Kind: OwnerStale, Reason: StaleBootChanged}
	}
	inspection := inspector.Inspect(rec.PID)
	switch inspection.Kind {
	case InspectAbsent:
		return OwnerState{Kind: OwnerStale, Reason: StalePIDAbsent}
	case InspectUnknown:
		return OwnerState{Kind: OwnerUnknown, Reason: fmt.Sprintf(
			"owner PID %d cannot be inspected: %s", rec.PID, inspection.Diagnostic)}
	case InspectLive:
	default:
		panic(fmt.Sprintf("lease: inspector returned %v for PID %d", inspection.Kind, rec.PID))
	}
	return classifyLive(rec, inspection)
}

func classifyLive(rec ProcessIdentity, inspection Inspection) OwnerState {
	observed := inspection.Identity
	// The inspected process's own boot, not only the caller's: with the
	// caller's boot id unreadable, a PID reused after a reboot with the
	// same start ticks would otherwise pass for the owner.
	if bootsDiffer(rec.BootID, observed.BootID) {
		return OwnerState{Kind: OwnerStale, Reason: StaleBootChanged}
	}
	if inspection.State == StateZombie && inspection.Threads <= 1 {
		return OwnerState{Kind: OwnerStale, Reason: StaleZombie}
	}
	if observed.StartTime != rec.StartTime {
		return OwnerState{Kind: OwnerStale, Reason: StaleStartChanged}
	}
	if observed.ExecutableDev != rec.ExecutableDev || observed.ExecutableIno != rec.ExecutableIno {
		return OwnerState{Kind: OwnerStale, Reason: StaleExecutableChanged}
	}
	return OwnerState{Kind: OwnerLive}
}

// bootsDiffer reports whether two boot ids are both known and differ: the
// process table of the one is not the other's.
func bootsDiffer(recorded, observed string) bool {
	return recorded != "" && observed != "" && recorded != observed
}

// IsSameProcess reports whether rec names exactly the process current: the
// fencing test of WithCurrentLease. Unlike ClassifyRecord it needs no
// inspection, since current is the caller itself.
func IsSameProcess(rec, current ProcessIdentity) bool {
	return rec.Hostname == current.Hostname &&
		rec.PIDNamespace == current.PIDNamespace &&
		rec.PID == current.PID &&
		rec.StartTime == current.StartTime &&
		rec.ExecutableDev == current.ExecutableDev &&
		rec.ExecutableIno == current.ExecutableIno &&
		(rec.BootID == "" || current.BootID == "" || rec.BootID == current.BootID)
}
