package lease

import (
	"fmt"
	"strings"
)

// ProcessIdentity names one process incarnation precisely enough that a
// later, unrelated process reusing its PID is told apart from it. See
// ARCHITECTURE.md, "Process identity".
type ProcessIdentity struct {
	// PID is the process ID as seen from PIDNamespace.
	PID int
	// StartTime is the process start time in clock ticks since boot
	// (/proc/PID/stat field 22), in decimal. Two processes can share a tick.
	StartTime string
	// BootID identifies the kernel boot (/proc/sys/kernel/random/boot_id).
	// Empty when the host does not expose one.
	BootID string
	// Executable is the executable's path at capture time. Informational
	// only: an upgraded binary keeps running from its old inode while the
	// path shows "(deleted)", so the engines compare ExecutableDev and
	// ExecutableIno instead.
	Executable    string
	ExecutableDev uint64
	ExecutableIno uint64
	// Hostname is the host's name at capture time.
	Hostname string
	// PIDNamespace identifies the PID namespace (the inode of
	// /proc/PID/ns/pid, in decimal). Empty when unknown. PIDs are only
	// comparable within one namespace.
	PIDNamespace string
	// UID is the process's real user ID.
	UID int
}

// Validate reports the first missing or malformed field of an identity that
// an Inspector returned for a live process or for the current process.
func (p ProcessIdentity) Validate() error {
	switch {
	case p.PID <= 0:
		return fmt.Errorf("process identity: PID %d is not positive", p.PID)
	case !isDecimal(p.StartTime):
		return fmt.Errorf("process identity: start time %q is not a decimal tick count", p.StartTime)
	case !strings.HasPrefix(p.Executable, "/"):
		return fmt.Errorf("process identity: executable %q is not absolute", p.Executable)
	case p.Hostname == "":
		return fmt.Errorf("process identity: hostname is empty")
	case p.UID < 0:
		return fmt.Errorf("process identity: UID %d is negative", p.UID)
	}
	return nil
}

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

// ProcessState is the scheduler state of a live process, as far as the
// identity rules need it.
type ProcessState int

const (
	// StateRunning covers every state but zombie (R, S, D, T, ...).
	StateRunning ProcessState = iota
	// StateZombie is Z: exited, not yet reaped. A zombie whose thread-group
	// leader exited while other threads still run is still alive.
	StateZombie
)

// InspectionKind is the outcome class of Inspector.Inspect.
type InspectionKind int

const (
	// InspectLive: a process with that PID exists; Identity describes it.
	InspectLive InspectionKind = iota + 1
	// InspectAbsent: no process has that PID.
	InspectAbsent
	// InspectUnknown: the process table could not be read for that PID
	// (EACCES/EPERM, an unsupported platform, malformed /proc data).
	InspectUnknown
)

func (k InspectionKind) String() string {
	switch k {
	case InspectLive:
		return "live"
	case InspectAbsent:
		return "absent"
	case InspectUnknown:
		return "unknown"
	}
	return fmt.Sprintf("InspectionKind(%d)", int(k))
}

// Inspection is what Inspector.Inspect learned about one PID.
type Inspection struct {
	Kind InspectionKind
	// Identity, State and Threads are set when Kind is InspectLive.
	Identity ProcessIdentity
	State    ProcessState
	// Threads is num_threads (/proc/PID/stat field 20).
	Threads int
	// Diagnostic says why, when Kind is InspectUnknown.
	Diagnostic string
}

// Inspector reads the process table of the host the engine runs on.
type Inspector interface {
	// Current returns the identity of the calling process.
	Current() (ProcessIdentity, error)
	// Inspect looks up pid in the caller's PID namespace.
	Inspect(pid int) Inspection
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
// identity. The rules, in order (ARCHITECTURE.md, "Process identity"):
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
