package simproc

import (
	"fmt"
	"strconv"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease"
)

// deletedSuffix is what /proc/PID/exe shows after the executable was replaced.
const deletedSuffix = " (deleted)"

// Inspector returns the lease.Inspector that process self sees: its own
// identity, and the process table of its own PID namespace.
func (h *Host) Inspector(self *Proc) lease.Inspector {
	if self == nil {
		panic("simproc: inspector for a nil process")
	}
	return &inspector{host: h, self: self}
}

// inspector implements the public interface (lease.Inspector is its alias).
var _ env.Inspector = (*inspector)(nil)

type inspector struct {
	host *Host
	self *Proc
}

// Current implements lease.Inspector. It fails once self is no longer
// running (the simulator never lets a dead process call it).
func (in *inspector) Current() (lease.ProcessIdentity, error) {
	if in.self.State != Running || in.self.Boot != in.host.boot {
		return lease.ProcessIdentity{}, fmt.Errorf("simproc: process %d on %s is %v", in.self.PID, in.host.name, in.self.State)
	}
	return in.host.identity(in.self), nil
}

// Inspect implements lease.Inspector.
func (in *inspector) Inspect(pid int) lease.Inspection {
	h := in.host
	target := h.namespaces[in.self.NS].procs[pid]
	if target == nil {
		return lease.Inspection{Kind: lease.InspectAbsent}
	}
	if h.InspectFault != nil && h.InspectFault(pid) {
		return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: fmt.Sprintf(
			"readlink /proc/%d/exe: permission denied (injected)", pid)}
	}
	if h.DenyOtherUIDs && target.UID != in.self.UID {
		return lease.Inspection{Kind: lease.InspectUnknown, Diagnostic: fmt.Sprintf(
			"readlink /proc/%d/exe: permission denied (uid %d, caller uid %d)", pid, target.UID, in.self.UID)}
	}
	state := lease.StateRunning
	if target.State == Zombie {
		state = lease.StateZombie
	}
	return lease.Inspection{
		Kind:     lease.InspectLive,
		Identity: h.identity(target),
		State:    state,
		Threads:  target.Threads,
	}
}

// identity is what /proc says about p.
func (h *Host) identity(p *Proc) lease.ProcessIdentity {
	exe := p.ExePath
	if h.exes[p.ExePath] != p.ExeIno {
		exe += deletedSuffix
	}
	return lease.ProcessIdentity{
		PID:           p.PID,
		StartTime:     strconv.FormatUint(p.StartTicks, 10),
		BootID:        h.bootID,
		Executable:    exe,
		ExecutableDev: ExeDev,
		ExecutableIno: p.ExeIno,
		Hostname:      h.name,
		PIDNamespace:  h.NamespaceID(p.NS),
		UID:           int(p.UID),
	}
}
