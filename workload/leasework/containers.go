package leasework

// Containers. Each host draws its number of PID
// namespaces per seed (workkit.DrawNamespaces). Its workers are dealt round
// the namespaces, so every namespace's first worker is its PID 1 and, all
// spawned in tick 0 with the same executable, the workers of one host are
// identity twins but for their namespace: only the namespace comparison
// tells a container's owner from the process with its PID here. A record of
// another namespace must be refused (HumanForeignNamespace), never
// reclaimed; the liveness probe and the operators run in the namespace a
// record names (faults.go, paused.go).

import (
	"fmt"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/workload/workkit"
)

// addHost adds host i mounting volume, with its drawn PID namespaces.
func (lw *leaseWorld) addHost(i int, volume *sim.Volume) *sim.Host {
	w := lw.world
	namespaces := workkit.DrawNamespaces(w.Decisions())
	if namespaces > 1 {
		w.Probe(workkit.ProbeContainerWorld)
	}
	return w.AddHost(sim.HostSpec{Name: fmt.Sprintf("host%d", i), PIDMax: lw.opts.PIDMax, Volume: volume,
		Namespaces: namespaces})
}

// workerNamespace deals worker j of h round h's namespaces.
func workerNamespace(h *sim.Host, j int) int { return j % h.Table().NamespaceCount() }

// noteForeignRefusal fires the container probes when p's call was refused
// for a record of another PID namespace of its host: the owner record's.
func (lw *leaseWorld) noteForeignRefusal(p *sim.Proc, refusal lease.Refusal) {
	if refusal.Human != lease.HumanForeignNamespace {
		return
	}
	lw.world.Probe("lease-refused-foreign-namespace")
	data, err := workkit.ReadRoot(lw.space(p).volume.Root(), leaseOwnerPath)
	if err != nil {
		return
	}
	if r, ok := lw.parseRecord(data); ok {
		workkit.NoteForeignOwner(lw.world, p, r.Hostname, r.PIDNamespace, r.PID)
	}
}
