package workkit

import (
	"github.com/leasekit/leasekit/sim"
)

// Containers. A seed may give a host several PID
// namespaces: containers that share the host's volume, hostname and boot id,
// each with its own PID numbering from 1, so the first worker spawned in a
// namespace is that namespace's PID 1 (its init) and low PIDs are alive in
// several namespaces at once. The engines' rule is that an owner recorded in
// another namespace is unknown: never inspected by PID from here, never
// reclaimed, never taken for the caller. The probes below say when a run
// met the situation in which that rule matters.
const (
	// ProbeContainerPID1 fires when an engine call met an owner record of
	// PID 1 in a namespace other than the host's initial one (a container's
	// init holds the record).
	ProbeContainerPID1 = "container-pid1"
	// ProbeContainerPIDCollision fires when an engine call met an owner
	// record from another namespace whose PID is alive in the caller's own
	// namespace as another process: a PID-only judge would take it for the
	// owner (or, once it dies, call the live owner stale).
	ProbeContainerPIDCollision = "container-pid-collision"
	// ProbeContainerWorld fires at setup when a seed drew several
	// namespaces on a host.
	ProbeContainerWorld = "container-namespaces"
)

// namespacesMax is the largest number of PID namespaces a host is given.
const namespacesMax = 3

// DrawNamespaces draws how many PID namespaces a host has: one (no
// containers) in half the seeds, else two or three.
func DrawNamespaces(d *sim.Decisions) int {
	if d.Intn(2) == 0 {
		return 1
	}
	return 2 + d.Intn(namespacesMax-1)
}

// NamespaceOf returns the index on h of the PID namespace whose id (the
// inode of /proc/PID/ns/pid, as records carry it) is id; ok is false when
// h has no such namespace.
func NamespaceOf(h *sim.Host, id string) (ns int, ok bool) {
	table := h.Table()
	for i := 0; i < table.NamespaceCount(); i++ {
		if table.NamespaceID(i) == id {
			return i, true
		}
	}
	return 0, false
}

// NoteForeignOwner fires the container probes for an owner record (its
// hostname, PID namespace id and PID) that process p's engine call met. A
// record of another host, or of p's own namespace, is not a container
// situation and fires nothing. It reports whether the record was in another
// namespace of p's host.
func NoteForeignOwner(w *sim.World, p *sim.Proc, hostname, nsID string, pid int) bool {
	h := p.Host()
	if hostname != h.Name() {
		return false
	}
	ns, ok := NamespaceOf(h, nsID)
	if !ok || ns == p.Table().NS {
		return false
	}
	if pid == 1 && ns != 0 {
		w.Probe(ProbeContainerPID1)
	}
	if other := h.Table().Lookup(p.Table().NS, pid); other != nil {
		w.Probe(ProbeContainerPIDCollision)
	}
	return true
}
