package sim

import (
	"github.com/leasekit/leasekit/models"
	"github.com/leasekit/leasekit/simproc"
)

// lifeLedger is the single-host workloads' record of who is alive: it
// tracks every spawned process (a zombie whose other threads still run
// counts as alive) and puts each death and each reboot of the host into the
// history at the step it happens. The admission and dirlease workloads embed
// it.
type lifeLedger struct {
	ledgerWorld *World
	ledgerHost  *Host
	// alive maps a live (or live-thread zombie) process to its Proc.
	alive map[*simproc.Proc]*Proc
	// boot is the host's boot id as last recorded.
	boot string
}

// startLedger begins tracking host h's processes in world w.
func (l *lifeLedger) startLedger(w *World, h *Host) {
	l.ledgerWorld, l.ledgerHost = w, h
	l.alive = make(map[*simproc.Proc]*Proc)
	l.boot = h.Table().BootID()
	w.OnReap(l.reaped)
}

// track records a newly spawned process as alive.
func (l *lifeLedger) track(p *Proc) { l.alive[p.Table()] = p }

// noteExit records p's death unless it left a zombie whose other threads
// run: that death is recorded when the zombie is reaped.
func (l *lifeLedger) noteExit(p *Proc) {
	if t := p.Table(); t.State != simproc.Zombie || t.Threads <= 1 {
		l.recordDeath(p)
	}
}

func (l *lifeLedger) reaped(_ *Host, proc *simproc.Proc) {
	if p := l.alive[proc]; p != nil {
		l.recordDeath(p)
	}
}

func (l *lifeLedger) recordDeath(p *Proc) {
	if l.alive[p.Table()] != p {
		return
	}
	delete(l.alive, p.Table())
	l.ledgerWorld.RecordEvent("death", models.ProcessDeath{Proc: p.ID()})
}

// noteReboot records a reboot of the host the first step it is seen.
func (l *lifeLedger) noteReboot() {
	if boot := l.ledgerHost.Table().BootID(); boot != l.boot {
		l.boot = boot
		l.ledgerWorld.RecordEvent("reboot", models.Reboot{Host: l.ledgerHost.Name()})
	}
}
