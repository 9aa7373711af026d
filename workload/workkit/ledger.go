package workkit

import (
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/sim"
	"github.com/leasekit/leasekit/simproc"
)

// LifeLedger is the single-host workloads' record of who is alive: it
// tracks every spawned process (a zombie whose other threads still run
// counts as alive) and puts each death and each reboot of the host into the
// history at the step it happens. The admission and dirlease workloads embed
// it.
type LifeLedger struct {
	ledgerWorld *sim.World
	// ledgerHosts are the hosts whose reboots are recorded; the first is
	// the workload's home host (Boot).
	ledgerHosts []*sim.Host
	// alive maps a live (or live-thread zombie) process to its Proc.
	alive map[*simproc.Proc]*sim.Proc
	// boots are the hosts' boot ids as last recorded, and bootCounts
	// their boot counts then (simproc.Host.Boot): every boot gets a fresh
	// id, so the count moves exactly when the id changes, and NoteReboot,
	// which runs after every step, compares counts instead of ids.
	boots      []string
	bootCounts []int
}

// StartLedger begins tracking host h's processes in world w.
func (l *LifeLedger) StartLedger(w *sim.World, h *sim.Host) {
	l.ledgerWorld = w
	l.alive = make(map[*simproc.Proc]*sim.Proc)
	l.AddLedgerHost(h)
	w.OnReap(l.reaped)
}

// AddLedgerHost records h's reboots too: a second host mounting the
// workload's volume (hosts.go).
func (l *LifeLedger) AddLedgerHost(h *sim.Host) {
	l.ledgerHosts = append(l.ledgerHosts, h)
	l.boots = append(l.boots, h.Table().BootID())
	l.bootCounts = append(l.bootCounts, h.Table().Boot())
}

// Alive reports whether p's process is alive in the ledger (a zombie whose
// other threads run counts as alive; a thread that returned while others of
// its process run is alive with them).
func (l *LifeLedger) Alive(p *sim.Proc) bool { return l.alive[p.Table()] == p.Leader() }

// AliveCount is the number of processes alive in the ledger.
func (l *LifeLedger) AliveCount() int { return len(l.alive) }

// Boot is the home host's boot id as the ledger last recorded it.
func (l *LifeLedger) Boot() string { return l.boots[0] }

// Track records a newly spawned process as alive.
func (l *LifeLedger) Track(p *sim.Proc) { l.alive[p.Table()] = p.Leader() }

// NoteExit records the death of p's process when p was its last thread,
// unless it left a zombie whose other threads run: that death is recorded
// when the zombie is reaped.
func (l *LifeLedger) NoteExit(p *sim.Proc) {
	if t := p.Table(); p.ProcessEnded() && (t.State != simproc.Zombie || t.Threads <= 1) {
		l.recordDeath(p)
	}
}

func (l *LifeLedger) reaped(_ *sim.Host, proc *simproc.Proc) {
	if p := l.alive[proc]; p != nil {
		l.recordDeath(p)
	}
}

func (l *LifeLedger) recordDeath(p *sim.Proc) {
	if l.alive[p.Table()] != p.Leader() {
		return
	}
	delete(l.alive, p.Table())
	l.ledgerWorld.RecordEvent("death", models.ProcessDeath{Proc: p.ProcessID()})
}

// NoteReboot records a reboot of a host the first step it is seen.
func (l *LifeLedger) NoteReboot() {
	for i, h := range l.ledgerHosts {
		if count := h.Table().Boot(); count != l.bootCounts[i] {
			l.boots[i], l.bootCounts[i] = h.Table().BootID(), count
			l.ledgerWorld.RecordEvent("reboot", models.Reboot{Host: h.Name()})
		}
	}
}
