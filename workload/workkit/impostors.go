package workkit

import (
	"github.com/leasekit/leasekit/sim"
)

// PIDFree reports whether dead's PID is free in its host's PID namespace
// again (no zombie holds it), so a PID-reuse impostor can take it.
func PIDFree(dead *sim.Proc) bool {
	table := dead.Table()
	return dead.Host().Table().Lookup(table.NS, table.PID) == nil
}

// SpawnOnDeadPID spawns a PID-reuse impostor on dead's
// host, PID namespace and PID, which PIDFree must have reported free: with
// dead's own executable in half the draws (never at dead's start tick,
// where it would be dead's exact twin, which no identity rule can tell
// apart), else with exe. It fires the probes <prefix>-pid-impostor,
// <prefix>-pid-impostor-same-exe and <prefix>-pid-impostor-across-boot, and
// returns nil when the spawn fails.
func SpawnOnDeadPID(w *sim.World, dead *sim.Proc, spec sim.ProcSpec, prefix string, body func(*sim.Proc)) *sim.Proc {
	host, table := dead.Host(), dead.Table()
	sameExe := w.Decisions().Intn(2) == 0 && host.Table().TicksNow() != table.StartTicks
	if sameExe {
		spec.Exe = table.ExePath
	}
	spec.PID, spec.Namespace = table.PID, table.NS
	p, err := w.Spawn(host, spec, body)
	if err != nil {
		return nil
	}
	w.Probe(prefix + "-pid-impostor")
	if sameExe {
		w.Probe(prefix + "-pid-impostor-same-exe")
	}
	if p.Table().Boot != table.Boot {
		w.Probe(prefix + "-pid-impostor-across-boot")
	}
	return p
}

// RaceWatch finds double stale reclaims: two calls that set out against one
// dead owner's record, one of which reclaimed it. Begin and End bracket each
// call; Reclaimed marks every other call in flight that began after the
// owner died; End reports whether the call was so raced.
type RaceWatch struct {
	inflight []raceCall
}

type raceCall struct {
	proc   *sim.Proc
	callAt int64
	raced  bool
}

// Begin opens p's call at virtual time now.
func (rw *RaceWatch) Begin(p *sim.Proc, now int64) {
	rw.Forget(p)
	rw.inflight = append(rw.inflight, raceCall{proc: p, callAt: now})
}

// End closes p's call and reports whether another call reclaimed the record
// it set out against.
func (rw *RaceWatch) End(p *sim.Proc) (raced bool) {
	for _, c := range rw.inflight {
		raced = raced || (c.proc == p && c.raced)
	}
	rw.Forget(p)
	return raced
}

// Forget drops p's call (p died or its call ended).
func (rw *RaceWatch) Forget(p *sim.Proc) {
	for i, c := range rw.inflight {
		if c.proc == p {
			rw.inflight = append(rw.inflight[:i], rw.inflight[i+1:]...)
			return
		}
	}
}

// Reclaimed records that reclaimer reclaimed the record of an owner that
// died at diedAt.
func (rw *RaceWatch) Reclaimed(reclaimer *sim.Proc, diedAt int64) {
	for i := range rw.inflight {
		if c := &rw.inflight[i]; c.proc != reclaimer && c.callAt > diedAt {
			c.raced = true
		}
	}
}
