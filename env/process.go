package env

import (
	"fmt"
	"strings"
)

// ProcessIdentity names one process incarnation precisely enough that a
// later, unrelated process reusing its PID is told apart from it. leasekit's
// docs/FORMAT-lease.md, "Identity rules (which owners are stale)", gives
// the rules that compare them.
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

// Inspector reads the process table of the host the caller runs on. Its
// InspectAbsent answer is kill(pid, 0) failing with ESRCH; InspectLive also
// gives the identity that tells a reused PID from the original process.
type Inspector interface {
	// Current returns the identity of the calling process.
	Current() (ProcessIdentity, error)
	// Inspect looks up pid in the caller's PID namespace.
	Inspect(pid int) Inspection
}
