package workkit

import (
	"fmt"

	"github.com/leasekit/leasekit/sim"
)

// Places is where a workload of one volume runs its processes: the home host, with its drawn PID namespaces
// (containers), and in some seeds a second host mounting the same volume (a
// network mount) with namespaces of its own. An owner on the other host, or
// in another namespace, is never judged by PID from here: the engines call
// it unknown and refuse, and only an operator (or a process where it lives)
// resolves it.
type Places struct {
	// Hosts are the hosts mounting the volume; Hosts[0] is the home host.
	Hosts []*sim.Host
}

// Place is one process's host and PID namespace.
type Place struct {
	Host *sim.Host
	NS   int
}

// Probes of the drawn places.
const (
	// ProbeSecondHost fires at setup when a seed drew a second host.
	ProbeSecondHost = "second-host"
	// ProbeRemoteOwner fires when an engine call met an owner record of
	// the other host.
	ProbeRemoteOwner = "remote-owner-met"
)

// secondHostChance is the chance that a seed adds a second host.
const secondHostChance = 0.5

// DrawPlaces adds the hosts of a one-volume workload to w: host0 and, in
// half the seeds when remote is true, host1 on the same volume, each with
// its drawn namespaces. Each host's ledger reboots go to ledger.
func DrawPlaces(w *sim.World, volume *sim.Volume, pidMax int, remote bool, ledger *LifeLedger) Places {
	d := w.Decisions()
	hosts := 1
	if remote && d.Chance(secondHostChance) {
		hosts = 2
		w.Probe(ProbeSecondHost)
	}
	var places Places
	for i := 0; i < hosts; i++ {
		namespaces := DrawNamespaces(d)
		if namespaces > 1 {
			w.Probe(ProbeContainerWorld)
		}
		h := w.AddHost(sim.HostSpec{Name: fmt.Sprintf("host%d", i), PIDMax: pidMax, Volume: volume,
			Namespaces: namespaces})
		if i == 0 {
			ledger.StartLedger(w, h)
		} else {
			ledger.AddLedgerHost(h)
		}
		places.Hosts = append(places.Hosts, h)
	}
	return places
}

// Home is the home host's initial namespace: where setup's records and the
// final probes start.
func (pl Places) Home() Place { return Place{Host: pl.Hosts[0]} }

// Deal returns the place of the i-th long-lived process: dealt round the
// hosts and their namespaces (host0 ns0, host1 ns0, host0 ns1, ...), so
// each namespace's first process is its PID 1 and the processes of one host
// collide on low PIDs.
func (pl Places) Deal(i int) Place {
	var all []Place
	for ns := 0; ns < namespacesMax; ns++ {
		for _, h := range pl.Hosts {
			if ns < h.Table().NamespaceCount() {
				all = append(all, Place{Host: h, NS: ns})
			}
		}
	}
	return all[i%len(all)]
}

// Named returns the place an owner record names (its hostname and PID
// namespace id); ok is false when no host or namespace of pl matches.
func (pl Places) Named(hostname, nsID string) (Place, bool) {
	for _, h := range pl.Hosts {
		if h.Name() != hostname {
			continue
		}
		if ns, ok := NamespaceOf(h, nsID); ok {
			return Place{Host: h, NS: ns}, true
		}
	}
	return Place{}, false
}

// Spec returns spec placed in pl's namespace.
func (pl Place) Spec(spec sim.ProcSpec) sim.ProcSpec {
	spec.Namespace = pl.NS
	return spec
}

// Same reports whether p runs at pl.
func (pl Place) Same(p *sim.Proc) bool { return p.Host() == pl.Host && p.Table().NS == pl.NS }

// NoteOwnerMet fires the container and remote probes for an owner record
// (hostname, PID namespace id, PID) that p's engine call met, and reports
// whether the owner is elsewhere than p: another host, or another namespace
// of p's host.
func NoteOwnerMet(w *sim.World, p *sim.Proc, hostname, nsID string, pid int) bool {
	if hostname != p.Host().Name() {
		w.Probe(ProbeRemoteOwner)
		return true
	}
	return NoteForeignOwner(w, p, hostname, nsID, pid)
}
