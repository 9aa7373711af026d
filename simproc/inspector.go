package simproc

import (
	"fmt"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/internal/procfs"
	"github.com/leasekit/leasekit/lease"
)

// deletedSuffix is what /proc/PID/exe shows after the executable was replaced.
const deletedSuffix = " (deleted)"

// Inspector returns the lease.Inspector that process self sees: its own
// identity, and the process table of its own PID namespace. Both are read
// by internal/procfs, the real inspector's parser, from the files this
// host renders (procfs.go).
func (h *Host) Inspector(self *Proc) lease.Inspector {
	if self == nil {
		panic("simproc: inspector for a nil process")
	}
	in := &inspector{host: h, self: self}
	in.view = procView{host: h, self: self}
	in.table = procfs.NewSingleCaller(procRoot, &in.view)
	return in
}

// inspector implements the public interface (lease.Inspector is its alias).
var _ env.Inspector = (*inspector)(nil)

type inspector struct {
	host  *Host
	self  *Proc
	view  procView
	table *procfs.Table
	// current is the identity the last successful Current read, and
	// currentOf what it was read from (see currentInputs).
	current    lease.ProcessIdentity
	currentOf  currentInputs
	hasCurrent bool
	// inspected is the last hazard-free Inspect of a PID in use, what it
	// met (procView.seen), and inspectedOf what it read (inspectInputs).
	inspected     lease.Inspection
	inspectedSeen int
	inspectedOf   inspectInputs
	hasInspected  bool
}

// inspectInputs is everything the files a hazard-free Inspect of pid reads
// render from: the process the PID names in the caller's namespace, its
// executable's current inode, the host's boot id and name, and what the
// ptrace access check compares (DenyOtherUIDs, the caller's uid). As with
// currentInputs, equal inputs read equal bytes and so give an equal
// inspection and the same probes.
type inspectInputs struct {
	pid      int
	target   *Proc
	proc     Proc
	exeIno   uint64
	bootID   string
	hostname string
	deny     bool
	selfUID  uint32
}

// currentInputs is everything the files Current reads render from, for
// its own process: the process itself (PID, start time, comm, uid, state,
// threads, executable, namespace, boot), the process its PID names in its
// namespace (itself while it runs), the inode its executable's path names
// now (" (deleted)" after an upgrade), and the host's boot id and name.
// The rest of a rendered file (utime and stime) is parsed by nobody. Two
// Current calls with equal inputs parse equal bytes, so they return equal
// identities: Current hands the kept one back instead of rendering and
// parsing /proc again (about 7% of a lease campaign's CPU went to the
// engines' own-identity reads, one per Acquire, Release, WithCurrentLease
// and Inspect). Inspect, which draws the hazards, always reads.
type currentInputs struct {
	self     Proc
	atPID    *Proc
	exeIno   uint64
	bootID   string
	hostname string
}

func (in *inspector) currentInputs() currentInputs {
	h, self := in.host, in.self
	return currentInputs{self: *self, atPID: h.namespaces[self.NS].procs[self.PID], exeIno: h.exes[self.ExePath],
		bootID: h.bootID, hostname: h.name}
}

// Current implements lease.Inspector. It fails once self is no longer
// running (the simulator never lets a dead process call it); a zombie
// leader whose other threads run is alive, and its threads call it.
func (in *inspector) Current() (lease.ProcessIdentity, error) {
	alive := in.self.State == Running || (in.self.State == Zombie && in.self.threaded && in.self.Threads > 1)
	if !alive || in.self.Boot != in.host.boot {
		return lease.ProcessIdentity{}, fmt.Errorf("simproc: process %d on %s is %v", in.self.PID, in.host.name, in.self.State)
	}
	inputs := in.currentInputs()
	if in.hasCurrent && inputs == in.currentOf {
		return in.current, nil
	}
	in.view.reset()
	identity, err := in.table.Current(in.self.PID)
	in.hasCurrent = err == nil
	if err == nil {
		in.current, in.currentOf = identity, inputs
	}
	return identity, err
}

// Inspect implements lease.Inspector: procfs reads the rendered files,
// with this inspection's hazards drawn first (an injected EACCES on one
// file, or a zombie target reaped between two reads).
func (in *inspector) Inspect(pid int) lease.Inspection {
	h := in.host
	in.view.reset()
	target := h.namespaces[in.self.NS].procs[pid]
	if target != nil {
		switch {
		case h.InspectFault != nil && h.InspectFault(pid):
			in.view.eacces = eaccesFiles[(pid+h.eaccesInjected)%len(eaccesFiles)]
			h.eaccesInjected++
		case target.State == Zombie && !target.threaded && h.ProcHazard != nil && h.ProcHazard(HazardVanish):
			in.view.vanish = target
		}
	}
	inspection := in.inspect(pid, target)
	in.fireProbes(inspection)
	if target != nil && target.Stopped && inspection.Kind == lease.InspectLive && h.Probe != nil {
		h.Probe(ProbeStopped)
	}
	return inspection
}

// inspect is Table.Inspect(pid), or the kept answer of the last one when
// no hazard was drawn for this one and nothing it reads from changed.
func (in *inspector) inspect(pid int, target *Proc) lease.Inspection {
	if target == nil || in.view.eacces != "" || in.view.vanish != nil {
		return in.table.Inspect(pid) // an absent PID costs one failed read
	}
	h := in.host
	inputs := inspectInputs{pid: pid, target: target, proc: *target, exeIno: h.exes[target.ExePath],
		bootID: h.bootID, hostname: h.name, deny: h.DenyOtherUIDs, selfUID: in.self.UID}
	if in.hasInspected && inputs == in.inspectedOf {
		in.view.seen = in.inspectedSeen
		return in.inspected
	}
	inspection := in.table.Inspect(pid)
	in.inspected, in.inspectedSeen, in.inspectedOf, in.hasInspected = inspection, in.view.seen, inputs, true
	return inspection
}

// fireProbes reports the hazards this inspection met.
func (in *inspector) fireProbes(inspection lease.Inspection) {
	probe := in.host.Probe
	if probe == nil {
		return
	}
	seen := in.view.seen
	for _, p := range []struct {
		bit  int
		name string
	}{
		{seenHostileComm, ProbeCommWithParen}, {seenDeleted, ProbeExeDeleted}, {seenEACCES, ProbeEACCES},
		{seenVanished, ProbeVanished}, {seenESRCH, ProbeESRCH},
	} {
		if seen&p.bit != 0 {
			probe(p.name)
		}
	}
	if inspection.Kind == lease.InspectLive && inspection.State == lease.StateZombie {
		if seen&seenTaskExe != 0 {
			probe(ProbeZombieMulti)
		} else if inspection.Threads <= 1 {
			probe(ProbeZombieSingle)
		}
	}
}
