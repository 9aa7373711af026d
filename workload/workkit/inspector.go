package workkit

import "github.com/leasekit/leasekit/lease"

// UnknownInspector is an operator's Inspector that remembers the PIDs
// whose inspection answered unknown (EACCES, a vanished entry) since its
// last Forget: an oracle that judges an operator's advice or move may hold
// it to a live process only where the operator's own inspection could read
// that process.
type UnknownInspector struct {
	lease.Inspector
	// Unknown holds the PIDs answered unknown since the last Forget.
	Unknown map[int]bool
}

// Inspect is the wrapped Inspector's, remembering an unknown answer.
func (i *UnknownInspector) Inspect(pid int) lease.Inspection {
	got := i.Inspector.Inspect(pid)
	if got.Kind == lease.InspectUnknown {
		if i.Unknown == nil {
			i.Unknown = map[int]bool{}
		}
		i.Unknown[pid] = true
	}
	return got
}

// Forget starts a new call: no PID answered unknown yet.
func (i *UnknownInspector) Forget() { i.Unknown = nil }
